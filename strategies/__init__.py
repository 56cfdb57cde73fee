"""The built-in context strategies (one module per strategy, each exporting ``STRATEGIES``);
modules whose name starts with '_' are shared helpers, not plugins."""
