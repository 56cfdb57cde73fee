"""A plan's sandbox of one resource: lazy, checkpointed, diffable, applied by three-way merge.

Layout under the data dir: ``sandboxes/<plan>/<resource>/`` holds ``tree/`` (what tools
see), ``meta.json`` (written last: its presence marks a complete sandbox) and, for a
directory copy, ``snap.git/`` (a private repository).

- ``git-checkout``: ``tree/`` is a git worktree of the real repository on its own branch
  ``cleveragents/plan/<plan>``, forked from the real HEAD.
- ``fs-directory``: ``tree/`` is a copy of the directory (``.git`` folders left out) and a
  private repository records the fork and every checkpoint. Git stores each content once,
  so a checkpoint adds only what changed since the previous one: a diff-based snapshot.

Checkpoints are commits on the sandbox branch, kept alive by the refs
``refs/cleveragents/plan/<plan>/checkpoints/<sha>`` (a rollback may move the branch back
past later checkpoints; they stay reachable). Apply merges the sandbox branch with the
real resource's current state (three-way, the fork as base) and installs the result
through the journal (journal.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Protocol

from cleveragents.errors import ConflictError, NotFoundError, ValidationError

from .git import Git, GitError, z_split
from .journal import Journal, crash_point, recover
from .paths import confine

GIT_CHECKOUT: Final = "git-checkout"
FS_DIRECTORY: Final = "fs-directory"
SUPPORTED: Final = (GIT_CHECKOUT, FS_DIRECTORY)
# Only in sandbox trees: directories unchanged since the last scan are not read again
# when `add -A` and `clean` look for untracked files.
SANDBOX_CONFIG: Final = ("core.untrackedCache=true",)
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
# Sandboxes of subplans running in parallel threads are created one at a time: `git
# worktree add` on one repository from several threads at once races for its admin files.
_CREATING = threading.Lock()


class ResourceLike(Protocol):
    """What a sandbox needs to know of a resource (services' ResourceInfo fits)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def location(self) -> str: ...
    @property
    def iri(self) -> str: ...


@dataclass(frozen=True)
class SandboxResource:
    name: str
    type: str
    location: str
    iri: str = ""


@dataclass(frozen=True)
class Checkpoint:
    id: str  # the commit id in the sandbox repository
    label: str
    kind: str  # manual | pre_write | post_step | workspace_snapshot | pre_apply
    sequence: int
    created: str
    files: tuple[str, ...] = ()  # paths changed since the previous checkpoint

    def as_dict(self) -> dict[str, object]:
        return {**self.__dict__, "files": list(self.files)}


@dataclass(frozen=True)
class FileChange:
    status: str  # added | modified | deleted | type-changed
    path: str

    def as_dict(self) -> dict[str, str]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ApplyResult:
    """``applied``, ``unchanged`` (nothing to apply), ``conflict`` (three-way merge failed;
    real resource untouched, sandbox intact) or ``refused`` (uncommitted changes); a
    preflight says ``ready`` where an apply would have applied."""

    status: str
    resource: str
    changed_files: tuple[FileChange, ...] = ()
    conflicts: tuple[str, ...] = ()
    dirty_files: tuple[str, ...] = ()
    commit: str | None = None
    merged: bool = False  # the real resource had changed since the fork
    message: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            **self.__dict__,
            "changed_files": [c.as_dict() for c in self.changed_files],
            "conflicts": list(self.conflicts),
            "dirty_files": list(self.dirty_files),
        }


@dataclass
class _Meta:
    kind: str
    plan: str
    resource: dict[str, str]
    fork: str
    branch: str
    created: str
    extra: dict[str, str] = field(default_factory=dict)


_STATUS = {"A": "added", "M": "modified", "D": "deleted", "T": "type-changed"}


def sandboxes_root(data_dir: Path) -> Path:
    return data_dir / "sandboxes"


def plan_key(plan_id: str) -> str:
    """A plan's folder name: its ULID (the tail of an IRI), made path-safe."""
    return _SAFE.sub("_", plan_id.rstrip("/").rsplit("/", 1)[-1]) or "plan"


def resource_key(resource: ResourceLike) -> str:
    tail = resource.iri.rstrip("/").rsplit("/", 1)[-1] if resource.iri else ""
    return _SAFE.sub("_", tail or resource.name) or "resource"


class Sandbox:
    """One plan's sandbox of one resource. ``open`` does no work; ``root`` creates it."""

    def __init__(self, data_dir: Path, plan_id: str, resource: ResourceLike) -> None:
        if resource.type not in SUPPORTED:
            raise ValidationError(
                f"resource '{resource.name}' has type '{resource.type}', which has no sandbox; "
                f"sandboxes exist for {', '.join(SUPPORTED)}"
            )
        self.data_dir = data_dir
        self.plan_id = plan_id
        self.resource = SandboxResource(resource.name, resource.type, resource.location, resource.iri)
        self.dir = sandboxes_root(data_dir) / plan_key(plan_id) / resource_key(resource)
        self.tree = self.dir / "tree"
        self.branch = f"cleveragents/plan/{plan_key(plan_id)}"
        self.namespace = f"refs/cleveragents/plan/{plan_key(plan_id)}"

    @classmethod
    def open(cls, data_dir: Path, plan_id: str, resource: ResourceLike) -> Sandbox:
        """The plan's sandbox of ``resource`` (created on first use of ``root``). An apply
        that an earlier process left half done is finished or rolled back first."""
        recover(data_dir)
        return cls(data_dir, plan_id, resource)

    @classmethod
    def existing(cls, data_dir: Path, plan_id: str) -> list[Sandbox]:
        """The plan's sandboxes that have been created, by resource name."""
        folder = sandboxes_root(data_dir) / plan_key(plan_id)
        found = []
        for meta_file in sorted(folder.glob("*/meta.json")):
            meta = _Meta(**json.loads(meta_file.read_text()))
            found.append(cls(data_dir, plan_id, SandboxResource(**meta.resource)))
        return sorted(found, key=lambda s: s.resource.name)

    # -- identity and creation ---------------------------------------------------------------

    @property
    def kind(self) -> str:
        return "git-worktree" if self.resource.type == GIT_CHECKOUT else "directory-copy"

    @property
    def materialized(self) -> bool:
        return (self.dir / "meta.json").is_file()

    @property
    def root(self) -> Path:
        """The sandbox's working directory, created on first use."""
        if not self.materialized:
            with _CREATING, self._locked():
                if not self.materialized:
                    self._create()
        self._finish_rollback()
        return self.tree

    def resolve(self, path: str) -> Path:
        """``path`` (relative to the sandbox root) confined to the sandbox."""
        return confine(self.root, path)

    @property
    def fork(self) -> str:
        return self._meta().fork

    def _meta(self) -> _Meta:
        if not self.materialized:
            self.root  # noqa: B018 - creates it
        return _Meta(**json.loads((self.dir / "meta.json").read_text()))

    def git(self) -> Git:
        """git bound to the sandbox tree (the private repository for a directory copy)."""
        if self.resource.type == GIT_CHECKOUT:
            return Git(self.tree, config=SANDBOX_CONFIG)
        return Git(self.tree, git_dir=self.dir / "snap.git", config=SANDBOX_CONFIG)

    def _real(self) -> Path:
        location = Path(self.resource.location)
        if not location.is_dir():
            raise NotFoundError(f"resource '{self.resource.name}' is not at {location} any more")
        return location

    def _create(self) -> None:
        real = self._real()
        if self.dir.exists():  # a creation that was killed: start over
            self._remove_leftovers()
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.resource.type == GIT_CHECKOUT:
            repo = Git(real)
            fork = repo.rev("HEAD")
            repo.run("worktree", "add", "--quiet", "-B", self.branch, str(self.tree), fork)
        else:
            staging = self.dir / "tree.copying"
            shutil.copytree(real, staging, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            os.replace(staging, self.tree)
            git = self.git()
            git.run("init", "--quiet")
            git.run("symbolic-ref", "HEAD", f"refs/heads/{self.branch}")
            git.run("add", "-A")
            git.run("commit", "--quiet", "--allow-empty", "-m", f"fork of {real}")
            fork = git.rev("HEAD")
        self.git().run("update-ref", f"{self.namespace}/fork", fork)
        meta = _Meta(
            kind=self.kind,
            plan=self.plan_id,
            resource=dict(self.resource.__dict__),
            fork=fork,
            branch=self.branch,
            created=_now(),
        )
        tmp = self.dir / "meta.json.tmp"
        tmp.write_text(json.dumps(meta.__dict__, indent=1))
        os.replace(tmp, self.dir / "meta.json")

    def _remove_leftovers(self) -> None:
        if self.resource.type == GIT_CHECKOUT:
            repo = Git(self._real())
            repo.run("worktree", "remove", "--force", str(self.tree), check=False)
            repo.run("worktree", "prune", check=False)
        for child in self.dir.iterdir():
            if child.name != "lock":
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()

    def discard(self) -> None:
        """Remove the sandbox, its branch and its checkpoint refs (the real resource stays)."""
        if not self.dir.exists():
            return
        with self._locked():
            if self.resource.type == GIT_CHECKOUT and Path(self.resource.location).is_dir():
                repo = Git(Path(self.resource.location))
                repo.run("worktree", "remove", "--force", str(self.tree), check=False)
                repo.run("worktree", "prune", check=False)
                refs = repo.out("for-each-ref", "--format=%(refname)", self.namespace).splitlines()
                for ref in [*refs, f"refs/heads/{self.branch}"]:
                    repo.run("update-ref", "-d", ref, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One process at a time changes a sandbox."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with (self.dir / "lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # -- checkpoints -------------------------------------------------------------------------

    def checkpoint(self, label: str = "", *, kind: str = "manual") -> Checkpoint:
        """Commit the sandbox's current state (everything not git-ignored) as a checkpoint."""
        self.root  # noqa: B018 - creates it
        with self._locked():
            git = self.git()
            parent = git.rev("HEAD")
            sequence = len(self._checkpoint_refs()) + 1
            git.run("add", "-A")
            message = f"checkpoint {sequence}: {label or kind}\n\nkind: {kind}\nlabel: {label}\nplan: {self.plan_id}\n"
            # Plumbing rather than `git commit`: the index was refreshed by `add` already.
            tree = git.out("write-tree")
            created = datetime.now(UTC).replace(microsecond=0).isoformat()
            dates = {"GIT_AUTHOR_DATE": created, "GIT_COMMITTER_DATE": created}
            sha = git.out("commit-tree", tree, "-p", parent, "-m", message, env=dates)
            refs = f"update HEAD {sha} {parent}\nupdate {self.namespace}/checkpoints/{sha} {sha}\n"
            git.run("update-ref", "--stdin", "-m", f"checkpoint {sequence}", input=refs.encode())
            files = _paths_between(git, parent, sha)
            return Checkpoint(id=sha, label=label, kind=kind, sequence=sequence, created=created, files=files)

    def _checkpoint_refs(self) -> list[str]:
        listing = self.git().out("for-each-ref", "--format=%(objectname)", f"{self.namespace}/checkpoints/")
        return listing.splitlines()

    def checkpoints(self, *, with_files: bool = True) -> list[Checkpoint]:
        """Every checkpoint of the sandbox, in the order they were taken (``with_files``:
        with the paths each changed, one tree diff per checkpoint)."""
        if not self.materialized:
            return []
        git = self.git()
        shas = self._checkpoint_refs()
        if not shas:
            return []
        fmt = "%H%x00%cI%x00%B%x01"
        raw = git.run("show", "-s", f"--format={fmt}", *shas).stdout.decode(errors="replace")
        found = []
        for entry in raw.split("\x01"):
            entry = entry.strip("\n")
            if not entry:
                continue
            sha, created, body = entry.split("\0", 2)
            fields = dict(line.split(": ", 1) for line in body.splitlines()[1:] if ": " in line)
            sequence = int(body.split(":", 1)[0].removeprefix("checkpoint ").strip() or 0)
            files = tuple(
                z_split(git.run("diff-tree", "-r", "--name-only", "--no-renames", "-z", f"{sha}^", sha).stdout)
            )
            found.append(
                Checkpoint(
                    id=sha,
                    label=fields.get("label", ""),
                    kind=fields.get("kind", "manual"),
                    sequence=sequence,
                    created=created,
                    files=files,
                )
            )
        return sorted(found, key=lambda c: c.sequence)

    def find_checkpoint(self, ref: str) -> Checkpoint:
        """A checkpoint by id (or a unique prefix of at least 4 characters), label or sequence number."""
        known = self.checkpoints(with_files=False)
        matches = [c for c in known if len(ref) >= 4 and c.id.startswith(ref.lower())]
        matches = matches or [c for c in known if c.label and c.label == ref]
        matches = matches or [c for c in known if ref.isdigit() and c.sequence == int(ref)]
        if len(matches) == 1:
            return matches[0]
        listing = ", ".join(f"{c.sequence}:{c.id[:12]}" + (f" ({c.label})" if c.label else "") for c in known)
        if not matches:
            raise NotFoundError(
                f"no checkpoint '{ref}' in the sandbox of {self.resource.name}",
                detail=f"checkpoints: {listing or 'none'}",
            )
        raise ValidationError(f"checkpoint '{ref}' is ambiguous in {self.resource.name}", detail=listing)

    def rollback(self, checkpoint: str) -> Checkpoint:
        """Restore the sandbox exactly to a checkpoint (files, additions and deletions).

        The target is written to ``rollback.json`` first; a rollback killed half way is
        completed the next time the sandbox is used, so it takes effect fully or not yet."""
        target = self.find_checkpoint(checkpoint)
        with self._locked():
            intent = self.dir / "rollback.json"
            tmp = self.dir / "rollback.json.tmp"
            tmp.write_text(json.dumps({"target": target.id}))
            os.replace(tmp, intent)
            crash_point("rollback:intent-written")
            self._reset_to(target.id)
            intent.unlink()
        return target

    def _finish_rollback(self) -> None:
        intent = self.dir / "rollback.json"
        if intent.is_file():
            with self._locked():
                if intent.is_file():
                    self._reset_to(json.loads(intent.read_text())["target"])
                    intent.unlink()

    def _reset_to(self, sha: str) -> None:
        """Make the tree, the index and HEAD exactly ``sha`` (git-ignored files stay).

        One scan of the tree (``status``) finds what differs from HEAD; only those paths and
        the ones that differ between HEAD and ``sha`` are rewritten, so the cost follows the
        size of the change, not of the tree (``reset --hard`` + ``clean`` scan it twice and
        rewrite the index). HEAD moves last: a rollback killed half way is redone whole."""
        git = self.git()
        raw = git.run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames").stdout
        untracked, tracked = [], set()
        for entry in z_split(raw):
            (untracked.append if entry[:2] == "??" else tracked.add)(entry[3:])
        tracked.update(_paths_between(git, "HEAD", sha))
        for rel in untracked:
            path = self.tree / rel
            if path.is_symlink() or path.is_file():
                path.unlink()
            parent = path.parent
            while parent != self.tree and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
        crash_point("rollback:half-way")
        if tracked:
            spec = b"\0".join(p.encode(errors="surrogateescape") for p in sorted(tracked))
            git.run(
                "--literal-pathspecs", "checkout", "--quiet", "--no-overlay", sha,
                "--pathspec-from-file=-", "--pathspec-file-nul", input=spec,
            )  # fmt: skip
        git.run("update-ref", "-m", f"rollback to {sha}", "HEAD", sha)

    # -- what changed ------------------------------------------------------------------------

    def _snapshot_tree(self) -> str:
        """The tree of the sandbox as it is now (uncommitted work included), written with a
        copy of the index so the sandbox's own index is not touched."""
        git = self.git()
        index = Path(git.out("rev-parse", "--path-format=absolute", "--git-path", "index"))
        temp = self.dir / "index.snapshot"
        if index.is_file():
            # copy2 keeps the index's mtime: git re-reads a file whose mtime is not older
            # than its index ("racily clean"); a fresh mtime would hide a same-size edit
            # made in the checkout's clock tick.
            shutil.copy2(index, temp)
        else:
            temp.unlink(missing_ok=True)
        env = {"GIT_INDEX_FILE": str(temp)}
        git.run("add", "-A", env=env)
        tree = git.out("write-tree", env=env)
        temp.unlink(missing_ok=True)
        return tree

    def changed_files(self) -> list[FileChange]:
        """Files the sandbox changed since the fork, uncommitted work included."""
        if not self.materialized:
            return []
        tree = self._snapshot_tree()
        raw = self.git().run("diff", "--name-status", "--no-renames", "-z", self.fork, tree).stdout
        fields = z_split(raw)
        return [FileChange(_STATUS.get(fields[i][0], fields[i]), fields[i + 1]) for i in range(0, len(fields), 2)]

    def diff(self) -> str:
        """The reviewable unified diff of the sandbox against the fork (renames detected)."""
        if not self.materialized:
            return ""
        tree = self._snapshot_tree()
        return self.git().run("diff", "--no-color", "--find-renames", self.fork, tree).stdout.decode(errors="replace")

    # -- apply -------------------------------------------------------------------------------

    def apply(self, *, force: bool = False, message: str | None = None) -> ApplyResult:
        """Merge the sandbox into the real resource, all or nothing (see journal.py)."""
        return self._merge(force=force, message=message, install=True)

    def preflight(self, *, force: bool = False) -> ApplyResult:
        """What ``apply`` would do now, without touching the real resource: ``ready`` (with
        the files it would change), ``unchanged``, ``conflict`` or ``refused``. Several
        resources are applied together only when each one's preflight is ready or unchanged."""
        return self._merge(force=force, message=None, install=False)

    def _merge(self, *, force: bool, message: str | None, install: bool) -> ApplyResult:
        recover(self.data_dir)
        if not self.materialized:
            return ApplyResult("unchanged", self.resource.name, message="the sandbox was never used")
        with self._locked():
            if self.resource.type == GIT_CHECKOUT:
                return self._apply_git(force, message, install)
            return self._apply_directory(message, install)

    def _commit_pending(self) -> str:
        """The sandbox branch's head with any uncommitted work committed."""
        git = self.git()
        git.run("add", "-A")
        if git.run("diff", "--cached", "--quiet", ok_codes=(0, 1)).returncode == 1:
            git.run("commit", "--quiet", "--no-verify", "-m", f"pending work of plan {self.plan_id}")
        return git.rev("HEAD")

    def _apply_git(self, force: bool, message: str | None, install: bool = True) -> ApplyResult:
        name = self.resource.name
        real_root = self._real()
        repo = Git(real_root)
        head = self._commit_pending()
        if not self._ops_between(self.git(), self.fork, head):
            return ApplyResult("unchanged", name, message="the sandbox has no changes")
        symbolic = repo.run("symbolic-ref", "-q", "HEAD", check=False)
        ref = symbolic.stdout.decode().strip() if symbolic.returncode == 0 else "HEAD"
        current = repo.rev(ref)
        if current == self.fork:
            tree, merged = self.git().out("rev-parse", f"{head}^{{tree}}"), False
        else:
            outcome = _merge_tree(repo, current, head)
            if isinstance(outcome, list):
                return ApplyResult(
                    "conflict",
                    name,
                    conflicts=tuple(outcome),
                    merged=True,
                    message=f"{len(outcome)} file(s) conflict with changes made to {name} since the sandbox forked",
                )
            tree, merged = outcome, True
        new = repo.out(
            "commit-tree", tree, "-p", current, "-m", message or f"cleveragents: apply plan {plan_key(self.plan_id)}"
        )
        ops = self._ops_between(repo, current, new)
        dirty = _dirty_files(repo, {path for path, _, _ in ops})
        if dirty and not force:
            return ApplyResult(
                "refused",
                name,
                dirty_files=tuple(dirty),
                message=f"{name} has uncommitted changes; commit or stash them, or apply with force",
            )
        if not install:
            return ApplyResult("ready", name, changed_files=_file_changes(ops), merged=merged)
        journal = Journal.begin(self.data_dir, target=real_root, kind="git")
        journal.ref, journal.old, journal.new = ref, current, new
        self._stage(journal, repo, new, ops)
        journal.save(self.data_dir)
        crash_point("apply:staged")
        repo.run("update-ref", "-m", "cleveragents apply", ref, new, current)
        crash_point("apply:ref-moved")
        journal.state = "committed"
        journal.save(self.data_dir)
        crash_point("apply:committed")
        journal.finish(self.data_dir)
        return ApplyResult(
            "applied", name, changed_files=_file_changes(ops), commit=new, merged=merged, message=f"applied to {ref}"
        )

    def _apply_directory(self, message: str | None, install: bool = True) -> ApplyResult:
        name = self.resource.name
        real_root = self._real()
        git = self.git()
        head = self._commit_pending()
        if not self._ops_between(git, self.fork, head):
            return ApplyResult("unchanged", name, message="the sandbox has no changes")
        # The real directory as it is now, as a commit on top of the fork: the merge's "ours".
        index = self.dir / "index.real"
        index.unlink(missing_ok=True)
        real_git = Git(real_root, git_dir=self.dir / "snap.git")
        env = {"GIT_INDEX_FILE": str(index)}
        real_git.run("add", "-A", env=env)
        real_tree = real_git.out("write-tree", env=env)
        index.unlink(missing_ok=True)
        current = git.out("commit-tree", real_tree, "-p", self.fork, "-m", f"{name} at apply time")
        merged = git.out("rev-parse", f"{self.fork}^{{tree}}") != real_tree
        if merged:
            outcome = _merge_tree(git, current, head)
            if isinstance(outcome, list):
                return ApplyResult(
                    "conflict",
                    name,
                    conflicts=tuple(outcome),
                    merged=True,
                    message=f"{len(outcome)} file(s) conflict with changes made to {name} since the sandbox forked",
                )
            tree = outcome
        else:
            tree = git.out("rev-parse", f"{head}^{{tree}}")
        new = git.out("commit-tree", tree, "-p", current, "-m", message or f"apply plan {plan_key(self.plan_id)}")
        ops = self._ops_between(git, current, new)
        if not install:
            return ApplyResult("ready", name, changed_files=_file_changes(ops), merged=merged)
        journal = Journal.begin(self.data_dir, target=real_root, kind="directory")
        self._stage(journal, git, new, ops)
        journal.save(self.data_dir)
        crash_point("apply:staged")
        journal.state = "committed"
        journal.save(self.data_dir)
        crash_point("apply:committed")
        journal.finish(self.data_dir)
        return ApplyResult("applied", name, changed_files=_file_changes(ops), commit=None, merged=merged)

    @staticmethod
    def _ops_between(git: Git, old: str, new: str) -> list[tuple[str, str, str]]:
        """(path, status letter, new mode) of each file that differs; gitlinks are skipped."""
        raw = git.run("diff-tree", "-r", "--no-renames", "-z", old, new).stdout
        fields = z_split(raw)
        ops = []
        for i in range(0, len(fields), 2):
            _old_mode, new_mode, _old_id, _new_id, status = fields[i].lstrip(":").split(" ")
            if "160000" in (new_mode, _old_mode):
                continue
            ops.append((fields[i + 1], status[0], new_mode))
        return ops

    def _stage(self, journal: Journal, git: Git, commit: str, ops: list[tuple[str, str, str]]) -> None:
        writes = [(path, mode) for path, status, mode in ops if status != "D"]
        contents = _blobs(git, [f"{commit}:{path}" for path, _ in writes])
        for (path, mode), content in zip(writes, contents, strict=True):
            journal.stage(self.data_dir, path, content, mode)
        for path, status, _ in ops:
            if status == "D":
                journal.delete(path)


def _paths_between(git: Git, old: str, new: str) -> tuple[str, ...]:
    return tuple(z_split(git.run("diff-tree", "-r", "--name-only", "--no-renames", "-z", old, new).stdout))


def _merge_tree(git: Git, ours: str, theirs: str) -> str | list[str]:
    """The merged tree of two commits (their merge base is the fork), or the conflicting paths."""
    done = git.run("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs, ok_codes=(0, 1))
    fields = z_split(done.stdout)
    if done.returncode == 0:
        return fields[0]
    return sorted(set(fields[1:]))


def _dirty_files(repo: Git, touched: set[str]) -> list[str]:
    """Uncommitted changes in the real checkout: tracked files changed (staged or not), and
    untracked files the apply would overwrite."""
    raw = repo.run("status", "--porcelain=v1", "-z", "--untracked-files=all").stdout
    out: list[str] = []
    entries = z_split(raw)
    i = 0
    while i < len(entries):
        code, path = entries[i][:2], entries[i][3:]
        if code[0] in "RC":
            i += 1  # the source path of a rename follows
        if code == "??":
            if path in touched:
                out.append(path)
        elif code != "!!":
            out.append(path)
        i += 1
    return sorted(out)


def _blobs(git: Git, specs: list[str]) -> list[bytes]:
    """The contents of ``<commit>:<path>`` objects, read by one ``cat-file --batch``."""
    if not specs:
        return []
    request = "".join(f"{spec}\n" for spec in specs).encode(errors="surrogateescape")
    proc = git.run("cat-file", "--batch", input=request)
    data, pos, out = proc.stdout, 0, []
    for spec in specs:
        end = data.index(b"\n", pos)
        header = data[pos:end].split(b" ")
        if len(header) < 3 or header[-1] == b"missing":
            raise GitError(f"object {spec} is missing")
        size = int(header[2])
        out.append(data[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return out


def _file_changes(ops: list[tuple[str, str, str]]) -> tuple[FileChange, ...]:
    return tuple(FileChange(_STATUS.get(status, status), path) for path, status, _ in ops)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def conflict_error(result: ApplyResult) -> ConflictError:
    """The apply result as an error for callers that stop on a conflict or a refusal."""
    files = result.conflicts or result.dirty_files
    return ConflictError(result.message, detail="\n".join(files), data={"files": list(files)})
