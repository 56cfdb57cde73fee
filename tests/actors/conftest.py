"""Fixtures for the actor tests: one fake model server process per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cleveragents.fakes.model_server import FakeModelServer


@pytest.fixture(scope="module")
def model_server() -> Iterator[FakeModelServer]:
    """The fake model server (OpenAI and Anthropic wire formats); tests set its script."""
    with FakeModelServer() as server:
        yield server
