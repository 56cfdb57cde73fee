"""Storage: the Oxigraph store, the commit engine, history, views, the data dir and named queries."""
