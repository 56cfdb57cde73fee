"""Pinned real-world corpora (``corpora/manifest.toml``): download, verify, extract.

Each corpus is one published archive, a PyPI sdist (``pip download``), an npm tarball
(``npm pack``) or a Debian package (``apt-get download``; crates' sources are in
``librust-*-dev``, Go modules' in ``golang-*-dev``), pinned by version and sha256.
``corpus_dir(name)`` downloads it into ``corpora/cache/downloads/`` when absent, checks its
sha256 before anything is extracted, and extracts it safely and atomically into
``corpora/cache/<name>/``: the archive's root folder (``django-5.1.15/``, npm's
``package/``, a Debian package's ``usr/``) becomes that directory. Later calls are cache hits.

    python corpora/fetch.py --list                # the corpora of the manifest
    python corpora/fetch.py django rxjs-7.8.1     # fetch these, print their directories
    python corpora/fetch.py --all
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.toml"
# CLEVERAGENTS_CORPORA_CACHE moves the cache out of the checkout, so fresh clones on one
# machine (CI) share verified downloads; hashes are checked either way.
CACHE = Path(os.environ.get("CLEVERAGENTS_CORPORA_CACHE") or HERE / "cache")
SOURCES = ("pypi-sdist", "npm", "debian")
FIELDS = ("name", "source", "package", "version", "sha256", "why")
# pip may build an sdist's metadata in an isolated environment first: allow for that, never hang.
TIMEOUT_S = 900

# Names, packages and versions become cache paths: keep them to plain path segments.
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
_PACKAGE = re.compile(r"(@[a-z0-9][a-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_~-]*")  # ~ and + occur in Debian versions
_SHA256 = re.compile(r"[0-9a-f]{64}")
_NOISE = re.compile(r"WARNING: Location |(npm error)?\s+at ")


class CorpusError(RuntimeError):
    """Base of the errors of this module."""


class ManifestError(CorpusError):
    """The manifest is malformed, or has no corpus of the requested name."""


class FetchError(CorpusError):
    """An archive could not be had (registry unreachable, no such version, unreadable archive)."""


class ChecksumError(FetchError):
    """An archive does not have its pinned sha256 (never skip over this)."""


class UnsafeArchiveError(FetchError):
    """An archive member would land outside the target directory (path traversal, links, devices)."""


@dataclass(frozen=True)
class Corpus:
    name: str
    source: str
    package: str
    version: str
    sha256: str
    why: str

    @property
    def spec(self) -> str:
        """The requirement as the registry's client spells it."""
        if self.source == "pypi-sdist":
            return f"{self.package}=={self.version}"
        return f"{self.package}={self.version}" if self.source == "debian" else f"{self.package}@{self.version}"


def load_manifest(path: Path = MANIFEST) -> dict[str, Corpus]:
    """The ``[[corpus]]`` entries of ``path`` by name, in manifest order, each checked against the schema."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from exc
    entries = data.get("corpus")
    if not isinstance(entries, list) or not entries:
        raise ManifestError(f"{path}: no [[corpus]] entries")
    corpora: dict[str, Corpus] = {}
    for number, entry in enumerate(entries, 1):
        where = f"{path.name}, corpus #{number}"
        if not isinstance(entry, dict):
            raise ManifestError(f"{where}: not a table")
        missing, unknown = set(FIELDS) - set(entry), set(entry) - set(FIELDS)
        if missing or unknown:
            raise ManifestError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")
        bad = [key for key in FIELDS if not isinstance(entry[key], str) or not entry[key].strip()]
        if bad:
            raise ManifestError(f"{where}: {bad} must be non-empty strings")
        checks = (
            ("name", _NAME.fullmatch(entry["name"])),
            ("source", entry["source"] in SOURCES),
            ("package", _PACKAGE.fullmatch(entry["package"])),
            ("version", _VERSION.fullmatch(entry["version"])),
            ("sha256", _SHA256.fullmatch(entry["sha256"])),
        )
        for key, ok in checks:
            if not ok:
                raise ManifestError(f"{where}: invalid {key} {entry[key]!r}")
        if entry["name"] in corpora:
            raise ManifestError(f"{where}: duplicate name {entry['name']!r}")
        corpora[entry["name"]] = Corpus(**entry)
    return corpora


def corpus_names(manifest: Path = MANIFEST) -> list[str]:
    """The corpus names of the manifest, in manifest order (the requests releases oldest first)."""
    return list(load_manifest(manifest))


def get_corpus(name: str, manifest: Path = MANIFEST) -> Corpus:
    corpora = load_manifest(manifest)
    if name not in corpora:
        raise ManifestError(f"no corpus {name!r} in {manifest.name}; known: {', '.join(corpora)}")
    return corpora[name]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(archive: Path, expected: str) -> None:
    """Raise ChecksumError (and remove the file, so the next fetch downloads it anew) on a mismatch."""
    actual = sha256_file(archive)
    if actual != expected:
        archive.unlink(missing_ok=True)
        raise ChecksumError(f"{archive} has sha256 {actual}, expected {expected} (removed it)")


def download_dir(corpus: Corpus, cache: Path = CACHE) -> Path:
    """Where the archive of ``corpus`` is kept: one folder per package version."""
    return cache / "downloads" / corpus.source / corpus.package / corpus.version


def download(corpus: Corpus, dest: Path) -> Path:
    """The verified archive of ``corpus`` in ``dest``, downloaded first when ``dest`` holds none."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = _single_file(dest) or _download_into(corpus, dest)
    verify(archive, corpus.sha256)
    return archive


def corpus_archive(name: str, cache: Path = CACHE, manifest: Path = MANIFEST) -> Path:
    """The verified archive of the corpus ``name`` (downloaded when absent)."""
    corpus = get_corpus(name, manifest)
    return download(corpus, download_dir(corpus, cache))


def corpus_dir(name: str, cache: Path = CACHE, manifest: Path = MANIFEST) -> Path:
    """The extracted corpus ``name`` (``cache/<name>/``), downloaded and extracted when absent or stale."""
    corpus = get_corpus(name, manifest)
    dest = cache / corpus.name
    stamp = _stamp(cache, corpus)
    if _fresh(dest, stamp, corpus):
        return dest
    # Engineers and test processes share the checkout: one fetch per corpus at a time.
    with locked(cache / ".meta" / f"{corpus.name}.lock"):
        if not _fresh(dest, stamp, corpus):
            stamp.unlink(missing_ok=True)
            archive = download(corpus, download_dir(corpus, cache))
            if corpus.source == "debian":
                with _deb_files(archive) as tar:
                    extract(tar, dest)
            else:
                extract(archive, dest)
            stamp.write_text(corpus.sha256 + "\n")
    return dest


def extract(archive: Path, dest: Path) -> Path:
    """Extract the tar ``archive`` into ``dest`` (replacing it) and return ``dest``.

    The archive goes to a temporary sibling first and is renamed into place only once fully
    extracted; a single top-level folder becomes ``dest`` itself. Members that would escape
    (``..``, absolute names, links leading outside, device files) raise UnsafeArchiveError
    and leave nothing behind.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, filter=_safe_member)
        except tarfile.FilterError as exc:
            raise UnsafeArchiveError(f"{archive}: unsafe member {exc.tarinfo.name!r}: {exc}") from exc
        except tarfile.TarError as exc:
            raise FetchError(f"{archive}: not a readable tar archive: {exc}") from exc
        except OSError as exc:
            raise FetchError(f"{archive}: could not extract into {tmp}: {exc}") from exc
        entries = list(tmp.iterdir())
        single = len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink()
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(entries[0] if single else tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


@contextmanager
def _deb_files(archive: Path) -> Iterator[Path]:
    """The file tree of a verified ``.deb`` as a tar (``dpkg-deb --fsys-tarfile``), so it is
    extracted with the same safety checks as every other archive."""
    with tempfile.TemporaryDirectory(prefix=".deb-") as tmp:
        tar = Path(tmp) / "files.tar"
        with tar.open("wb") as out:
            try:
                proc = subprocess.run(
                    ["dpkg-deb", "--fsys-tarfile", str(archive)], stdout=out, stderr=subprocess.PIPE, check=False
                )
            except FileNotFoundError as exc:
                raise FetchError(f"{archive}: dpkg-deb is not installed ({exc})") from exc
        if proc.returncode != 0:
            raise FetchError(
                f"{archive}: not a readable Debian package: {_reason(proc.stderr.decode(errors='replace'))}"
            )
        yield tar


def _safe_member(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    # The stdlib "data" filter refuses '..' escapes, links leading outside and device files, but
    # quietly strips a leading '/': an absolute name is a malformed archive, so refuse it too.
    if member.name.startswith(("/", os.sep)):
        raise tarfile.AbsolutePathError(member)
    return tarfile.data_filter(member, path)


def _stamp(cache: Path, corpus: Corpus) -> Path:
    # Says which archive cache/<name>/ was extracted from; written only after a complete extraction.
    return cache / ".meta" / f"{corpus.name}.sha256"


def _fresh(dest: Path, stamp: Path, corpus: Corpus) -> bool:
    try:
        return dest.is_dir() and stamp.read_text().strip() == corpus.sha256
    except OSError:
        return False


@contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _single_file(folder: Path) -> Path | None:
    files = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")]
    if len(files) > 1:
        raise FetchError(f"{folder} holds several archives ({', '.join(p.name for p in files)}): keep one")
    return files[0] if files else None


def _download_into(corpus: Corpus, dest: Path) -> Path:
    """Download with the registry's own client into a temporary folder, then move the archive into ``dest``."""
    with tempfile.TemporaryDirectory(prefix=".partial-", dir=dest) as tmp:
        if corpus.source == "pypi-sdist":
            # --no-binary only for the package itself: its build requirements may come as wheels.
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", corpus.package]
            cmd += ["--disable-pip-version-check", "--quiet", "-d", tmp, corpus.spec]
        elif corpus.source == "debian":
            cmd = ["apt-get", "download", "-q", corpus.spec]
        else:
            cmd = ["npm", "pack", corpus.spec, "--pack-destination", tmp, "--ignore-scripts", "--loglevel=error"]
        try:
            _run(cmd, corpus, cwd=tmp)
        except FetchError:
            if corpus.source != "debian":
                raise
            # The package lists may be missing or older than the pin: refresh them once, then retry.
            _run(["apt-get", "update", "-qq"], corpus, cwd=tmp)
            _run(cmd, corpus, cwd=tmp)
        fetched = _single_file(Path(tmp))
        if fetched is None:
            raise FetchError(f"could not download {corpus.spec} ({corpus.source}): the client left no archive")
        return Path(shutil.move(fetched, dest / fetched.name))


def _run(cmd: list[str], corpus: Corpus, cwd: str | None = None) -> None:
    what = f"could not download {corpus.spec} ({corpus.source})"
    tool = {"pypi-sdist": "pip", "debian": "apt-get"}.get(corpus.source, "npm")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=TIMEOUT_S, cwd=cwd)
    except FileNotFoundError as exc:
        raise FetchError(f"{what}: {tool} is not installed ({exc})") from exc
    except subprocess.TimeoutExpired as exc:
        raise FetchError(f"{what}: {tool} did not finish within {TIMEOUT_S} s") from exc
    if proc.returncode != 0:
        raise FetchError(f"{what}: {tool} exited with {proc.returncode}: {_reason(proc.stderr)}")


def _reason(stderr: str) -> str:
    # Drop pip's warning per unusable local index and npm's stack frames. npm states the cause
    # first (code, syscall), pip last (no matching distribution): keep both ends of a long message.
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not _NOISE.match(ln)]
    text = "\n".join(lines) or "no message"
    return text if len(text) <= 1200 else f"{text[:400]}\n...\n{text[-800:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help="corpora to fetch (their paths are printed)")
    parser.add_argument("--all", action="store_true", help="fetch every corpus of the manifest")
    parser.add_argument("--list", action="store_true", help="list the corpora (the default without NAME)")
    parser.add_argument("--cache", type=Path, default=CACHE, help="cache directory (default: corpora/cache)")
    args = parser.parse_args(argv)
    try:
        corpora = load_manifest()
        if args.list or not (args.names or args.all):
            for c in corpora.values():
                where = args.cache / c.name
                fetched = _fresh(where, _stamp(args.cache, c), c)
                print(f"{c.name}\t{c.source} {c.spec}\t{where if fetched else '(not fetched)'}\t{c.why}")
        failures = 0
        for name in list(corpora) if args.all else args.names:
            try:
                print(corpus_dir(name, args.cache))
            except CorpusError as exc:
                print(f"error: {exc}", file=sys.stderr)
                failures += 1
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
