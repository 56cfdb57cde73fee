"""The apply journal: all or nothing per resource, also under SIGKILL.

Apply first *stages* every file it will write (content copied under the data dir) and
writes the journal (``state: staged``). Nothing in the real resource has changed yet. Then
it passes the commit point:

- for a git checkout, the branch moves to the merged commit in one ``update-ref`` (with
  the old value as a compare-and-swap guard); the journal then says ``committed``;
- for a directory, the journal itself is rewritten atomically to ``committed``.

After the commit point the staged files are renamed into place one by one; the journal
goes when all of them are there. ``recover(data_dir)`` (run whenever a sandbox is opened)
rolls a journal forward when it passed the commit point and discards it otherwise, so an
interrupted apply ends fully applied or untouched.

``crash_point`` is a fault-injection hook for the SIGKILL tests: when the environment
variable ``CLEVERAGENTS_SANDBOX_CRASH_AT`` names the point, the process kills itself there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from ulid import ULID

from .git import Git

CRASH_ENV: Final = "CLEVERAGENTS_SANDBOX_CRASH_AT"
JOURNAL_DIR: Final = ".journal"


def crash_point(name: str) -> None:
    """Die here with SIGKILL when the tests ask for it (no effect otherwise)."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


@dataclass
class FileOp:
    """One file of the apply: ``write`` (staged content, git mode) or ``delete``."""

    path: str
    action: str  # "write" | "delete"
    mode: str = "100644"  # git file mode: 100644, 100755 or 120000 (symlink)
    staged: str | None = None  # file name under the journal's files/


@dataclass
class Journal:
    id: str
    target: str  # the real resource's root
    kind: str  # "git" | "directory"
    state: str  # "staged" | "committed"
    ops: list[FileOp] = field(default_factory=list)
    # git only: the ref that moves, its old and its new commit.
    ref: str | None = None
    old: str | None = None
    new: str | None = None

    # -- storage -------------------------------------------------------------------------------

    @staticmethod
    def folder(data_dir: Path) -> Path:
        return data_dir / "sandboxes" / JOURNAL_DIR

    @classmethod
    def begin(cls, data_dir: Path, *, target: Path, kind: str) -> Journal:
        journal = cls(id=str(ULID()), target=str(target), kind=kind, state="staged")
        (journal.home(data_dir) / "files").mkdir(parents=True)
        return journal

    def home(self, data_dir: Path) -> Path:
        return self.folder(data_dir) / self.id

    def stage(self, data_dir: Path, path: str, content: bytes, mode: str) -> None:
        name = str(len(self.ops))
        (self.home(data_dir) / "files" / name).write_bytes(content)
        self.ops.append(FileOp(path=path, action="write", mode=mode, staged=name))

    def delete(self, path: str) -> None:
        self.ops.append(FileOp(path=path, action="delete"))

    def save(self, data_dir: Path) -> None:
        """Write the journal atomically and durably (temporary file, fsync, rename)."""
        home = self.home(data_dir)
        _fsync_tree(home / "files")
        body = json.dumps({**asdict(self), "ops": [asdict(op) for op in self.ops]}, indent=1).encode()
        tmp = home / "journal.json.tmp"
        with tmp.open("wb") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, home / "journal.json")
        _fsync_dir(home)

    @classmethod
    def load(cls, home: Path) -> Journal | None:
        try:
            raw: dict[str, Any] = json.loads((home / "journal.json").read_text())
        except (OSError, ValueError):
            return None
        raw["ops"] = [FileOp(**op) for op in raw.get("ops", [])]
        return cls(**raw)

    def discard(self, data_dir: Path) -> None:
        shutil.rmtree(self.home(data_dir), ignore_errors=True)

    # -- the commit point and what follows -------------------------------------------------------

    def passed_commit_point(self) -> bool:
        if self.state == "committed":
            return True
        if self.kind == "git" and self.ref and self.new:
            # Killed between the branch move and the journal update: the ref tells.
            done = Git(Path(self.target)).run("rev-parse", "--verify", "--quiet", self.ref, check=False)
            return done.stdout.decode().strip() == self.new
        return False

    def finish(self, data_dir: Path) -> list[str]:
        """Put every staged file in place (idempotent), then drop the journal. Returns the paths."""
        root = Path(self.target)
        files = self.home(data_dir) / "files"
        # Deletions first: a file may give way to a directory of the same name.
        ordered = [op for op in self.ops if op.action == "delete"] + [op for op in self.ops if op.action == "write"]
        for number, op in enumerate(ordered):
            target = root / op.path
            if op.action == "delete":
                _remove(target, root)
            else:
                assert op.staged is not None
                _install(files / op.staged, target, op.mode, tag=self.id)
            crash_point(f"apply:op-{number}")
        if self.kind == "git":
            _refresh_index(root, [op.path for op in self.ops])
        crash_point("apply:before-cleanup")
        self.discard(data_dir)
        return [op.path for op in self.ops]


def recover(data_dir: Path) -> list[dict[str, object]]:
    """Finish or roll back every journal an interrupted apply left; what was done, per journal."""
    folder = Journal.folder(data_dir)
    if not folder.is_dir():
        return []
    report: list[dict[str, object]] = []
    for home in sorted(folder.iterdir()):
        journal = Journal.load(home)
        if journal is None:  # killed while staging: nothing was touched
            shutil.rmtree(home, ignore_errors=True)
            report.append({"journal": home.name, "outcome": "rolled back"})
        elif journal.passed_commit_point():
            journal.finish(data_dir)
            report.append({"journal": journal.id, "target": journal.target, "outcome": "finished"})
        else:
            journal.discard(data_dir)
            report.append({"journal": journal.id, "target": journal.target, "outcome": "rolled back"})
    return report


def _install(staged: Path, target: Path, mode: str, *, tag: str) -> None:
    """Replace ``target`` by the staged content in one rename."""
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)  # a directory gives way to a file of the same name
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.ca-apply-{tag}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    if mode == "120000":
        os.symlink(staged.read_bytes().decode(errors="surrogateescape"), tmp)
    else:
        shutil.copyfile(staged, tmp)
        executable = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        current = tmp.stat().st_mode
        tmp.chmod((current | executable) if mode == "100755" else (current & ~executable))
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
    os.replace(tmp, target)


def _remove(target: Path, root: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    parent = target.parent
    while parent != root and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


def _refresh_index(root: Path, paths: list[str]) -> None:
    """The index entries of the applied paths follow the moved branch (HEAD)."""
    if not paths:
        return
    git = Git(root)
    spec = b"\0".join(p.encode(errors="surrogateescape") for p in paths)
    git.run("reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul", input=spec)
    git.run("update-index", "-q", "--refresh", ok_codes=(0, 1))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(files: Path) -> None:
    for item in files.iterdir():
        with item.open("rb") as handle:
            os.fsync(handle.fileno())
    _fsync_dir(files)
