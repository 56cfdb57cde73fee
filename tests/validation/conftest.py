"""Fixtures of the validation tests: the W3C SHACL Core suite, fetched once per session."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _fetcher() -> ModuleType:
    path = ROOT / "corpora" / "fetch_shacl_tests.py"
    spec = importlib.util.spec_from_file_location("fetch_shacl_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def w3c_core() -> Path | str:
    """The W3C core/ directory, or why it could not be fetched (a download error only:
    a checksum mismatch raises)."""
    fetcher = _fetcher()
    try:
        return fetcher.fetch()
    except fetcher.ChecksumError:
        raise
    except fetcher.FetchError as exc:
        return f"could not download the pyshacl {fetcher.VERSION} sdist from PyPI: {exc}"


@functools.cache
def w3c_cases() -> dict[str, object]:
    from tests.validation.w3c import load_cases

    core = w3c_core()
    return {} if isinstance(core, str) else {c.id: c for c in load_cases(core)}


@pytest.fixture(scope="session")
def shacl_core_dir() -> Path:
    """Runs corpora/fetch_shacl_tests.py (cached under corpora/cache/)."""
    core = w3c_core()
    if isinstance(core, str):
        pytest.skip(core)
    return core


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "w3c_case_id" in metafunc.fixturenames:
        ids = sorted(w3c_cases()) or ["<W3C suite unavailable>"]
        metafunc.parametrize("w3c_case_id", ids)
