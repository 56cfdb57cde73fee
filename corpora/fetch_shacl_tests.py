"""Fetch the W3C SHACL Core test suite as bundled in the pyshacl 0.40.1 sdist.

The installed pyshacl wheel does not ship its tests; the sdist carries the W3C data-shapes
manifests under ``test/resources/sht_tests``. This script downloads the sdist with pip and
checks it against a pinned sha256 (both done by ``corpora/fetch.py``), and extracts the
``core/`` tests into ``corpora/cache/shacl/`` (gitignored). Re-runs reuse the cache.

    python corpora/fetch_shacl_tests.py            # prints the core/ directory
"""

from __future__ import annotations

import argparse
import sys
import tarfile
from pathlib import Path

try:
    from corpora.fetch import ChecksumError, Corpus, FetchError, locked
    from corpora.fetch import download as download_archive
except ModuleNotFoundError:  # run as a script: corpora/ itself is sys.path[0]
    from fetch import ChecksumError, Corpus, FetchError, locked  # type: ignore[no-redef]
    from fetch import download as download_archive  # type: ignore[no-redef]

VERSION = "0.40.1"
SDIST = f"pyshacl-{VERSION}.tar.gz"
# sha256 of pyshacl-0.40.1.tar.gz as published on PyPI (checked on download).
SHA256 = "011e3cf1a68b31747cb762ba3d755ae1bdcc464c8fad0dc212a9adc550719552"
MEMBER_PREFIX = f"pyshacl-{VERSION}/test/resources/sht_tests/"
DEFAULT_CACHE = Path(__file__).resolve().parent / "cache" / "shacl"
PYSHACL = Corpus("shacl", "pypi-sdist", "pyshacl", VERSION, SHA256, "the W3C SHACL Core test suite")
# The errors are part of this script's interface (the validation tests catch them).
__all__ = ["ChecksumError", "FetchError", "download", "extract", "fetch"]


def download(cache: Path) -> Path:
    """The verified sdist in ``cache``, downloaded with pip when missing."""
    return download_archive(PYSHACL, cache)


def extract(archive: Path, cache: Path) -> Path:
    """Extract the sht_tests manifests (root manifest and core/) and return core/."""
    root = cache / "sht_tests"
    marker = root / ".complete"
    if marker.exists():
        return root / "core"
    with tarfile.open(archive, "r:gz") as tar:
        members = []
        for member in tar.getmembers():
            rel = member.name.removeprefix(MEMBER_PREFIX)
            if member.name.startswith(MEMBER_PREFIX) and (rel == "manifest.ttl" or rel.startswith("core/")):
                member.name = rel
                members.append(member)
        tar.extractall(root, members=members, filter="data")
    marker.write_text(f"{SDIST} {SHA256}\n")
    return root / "core"


def fetch(cache: Path = DEFAULT_CACHE) -> Path:
    """The directory holding the W3C SHACL Core tests (``core/manifest.ttl`` and its parts)."""
    marker = cache / "sht_tests" / ".complete"
    if marker.exists():
        return cache / "sht_tests" / "core"
    with locked(cache / ".fetch.lock"):  # parallel test workers share the cache
        return extract(download(cache), cache)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="cache directory")
    args = parser.parse_args()
    try:
        print(fetch(args.cache))
    except FetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
