"""The server surfaces: MCP (``mcp_server``) and A2A (``a2a_server``), with the security
every surface shares (``security``). They call the application services through the
``operations.Operations`` protocol, which ``services/serving.py`` implements."""
