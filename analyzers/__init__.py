"""The built-in analyzers (one module per language or format, each exporting ``ANALYZERS``);
modules whose name starts with '_' are shared helpers, not plugins."""
