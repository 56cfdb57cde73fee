"""Actors: definitions (YAML v3), providers through LangChain, the LangGraph runtime."""
