"""ACMS: context assembly (architecture.md "ACMS"): data types, backends, pipeline, strategies."""
