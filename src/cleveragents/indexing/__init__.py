"""Feeding the graph: analyzer plugins, linking, incremental indexing, git history, rendering."""
