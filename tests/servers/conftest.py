from __future__ import annotations

from pathlib import Path

import pytest

from .support import Corpus, build_corpus


@pytest.fixture(scope="package")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("servers-corpus"))


@pytest.fixture
def fresh_corpus(tmp_path: Path) -> Corpus:
    """A store of its own, for tests that write."""
    return build_corpus(tmp_path)


from ..plans.conftest import ws  # noqa: E402,F401 - the plan tools' store: a project, no resources
