"""Fetch the W3C SHACL Core test suite as bundled in the pyshacl 0.40.1 sdist.

The installed pyshacl wheel does not ship its tests; the sdist carries the W3C data-shapes
manifests under ``test/resources/sht_tests``. This script downloads the sdist with pip
(``--no-binary :all:``), checks it against a pinned sha256, and extracts the ``core/``
tests into ``corpora/cache/shacl/`` (gitignored). Re-runs reuse the cache.

    python corpora/fetch_shacl_tests.py            # prints the core/ directory
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
from pathlib import Path

VERSION = "0.40.1"
SDIST = f"pyshacl-{VERSION}.tar.gz"
# sha256 of pyshacl-0.40.1.tar.gz as published on PyPI (checked on download).
SHA256 = "011e3cf1a68b31747cb762ba3d755ae1bdcc464c8fad0dc212a9adc550719552"
MEMBER_PREFIX = f"pyshacl-{VERSION}/test/resources/sht_tests/"
DEFAULT_CACHE = Path(__file__).resolve().parent / "cache" / "shacl"


class FetchError(RuntimeError):
    """The sdist could not be downloaded (e.g. PyPI unreachable)."""


class ChecksumError(FetchError):
    """The downloaded sdist does not have the pinned sha256 (never skip over this)."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(cache: Path) -> Path:
    """The verified sdist in ``cache``, downloaded with pip when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / SDIST
    if not archive.exists():
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        cmd += [f"pyshacl=={VERSION}", "-d", str(cache), "--quiet"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not archive.exists():
            raise FetchError(f"pip download failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
    actual = sha256(archive)
    if actual != SHA256:
        archive.unlink()
        raise ChecksumError(f"{SDIST} has sha256 {actual}, expected {SHA256}")
    return archive


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
