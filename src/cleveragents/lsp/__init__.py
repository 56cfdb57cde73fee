"""Language Server Protocol integration: the LSP Registry (``registry``, ``builtins``),
resource language discovery (``languages``) and the runtime that drives servers."""
