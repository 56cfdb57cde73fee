"""The built-in resource tools (spec: BuiltinToolAdapter): files, directories, search and
``run_command``, all inside the plan's sandbox of a resource.

Every path is relative to the sandbox root and confined to it (sandbox/paths.py). The
optional ``resource`` argument names the resource when the plan has several. Writing tools
return the changes they made; the router records them in the plan's ChangeSet.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any, Final

from cleveragents.errors import ConflictError, NotFoundError, ValidationError
from cleveragents.sandbox import Sandbox, run_process
from cleveragents.sandbox.git import z_split
from cleveragents.sandbox.paths import relative, walk_files

from .model import FILE_WRITE, READ_ONLY, Capability, Change, Handler, ToolContext, ToolOutput, ToolSpec

MAX_READ_BYTES: Final = 1_000_000
DEFAULT_LIST_LIMIT: Final = 1000
DEFAULT_SEARCH_LIMIT: Final = 200
DEFAULT_COMMAND_TIMEOUT: Final = 60
MAX_COMMAND_TIMEOUT: Final = 3600
COMMAND: Final = Capability(
    read_only=False,
    writes=True,
    checkpointable=True,
    checkpoint_scope="commit",
    side_effects=("process",),
    environment="host",
)

_RESOURCE = {"type": "string", "minLength": 1, "description": "The resource's name; needed when the plan has several."}
_PATH = {"type": "string", "minLength": 1, "description": "A path relative to the sandbox root."}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**properties, "resource": _RESOURCE},
        "required": required,
        "additionalProperties": False,
    }


# -- helpers ------------------------------------------------------------------------------------


def _where(args: dict[str, Any], ctx: ToolContext, key: str = "path") -> tuple[Sandbox, Path]:
    sandbox = ctx.sandbox(args.get("resource"))
    return sandbox, sandbox.resolve(args.get(key, "."))


def _digest(path: Path) -> str | None:
    if not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def _text(path: Path, shown: str) -> str:
    if not path.exists():
        raise NotFoundError(f"{shown} does not exist")
    if not path.is_file():
        raise ValidationError(f"{shown} is not a file")
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        raise ValidationError(f"{shown} is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{shown} is not UTF-8 text") from None


def _write(path: Path, content: str) -> None:
    """Write through a temporary file and a rename: a reader never sees half a file."""
    tmp = path.parent / f".{path.name}.ca-tmp"
    tmp.write_text(content, encoding="utf-8")
    if path.is_file():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)


# -- read-only tools ----------------------------------------------------------------------------


def read_file(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sandbox, path = _where(args, ctx)
    shown = args["path"]
    if path.is_file() and path.stat().st_size > MAX_READ_BYTES and "max_lines" not in args:
        raise ValidationError(f"{shown} is larger than {MAX_READ_BYTES} bytes; read it in parts with offset/max_lines")
    lines = _text(path, shown).splitlines(keepends=True)
    offset = args.get("offset", 1)
    limit = args.get("max_lines", len(lines))
    chosen = lines[offset - 1 : offset - 1 + limit]
    return {
        "path": relative(sandbox.root, path),
        "content": "".join(chosen),
        "first_line": offset,
        "line_count": len(chosen),
        "total_lines": len(lines),
        "truncated": offset - 1 + limit < len(lines),
    }


def list_files(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sandbox, start = _where(args, ctx)
    if not start.is_dir():
        raise NotFoundError(f"{args.get('path', '.')} is not a directory")
    pattern = args.get("pattern", "*")
    limit = args.get("limit", DEFAULT_LIST_LIMIT)
    root = sandbox.root
    if args.get("recursive", True):
        candidates = (relative(root, p) for p in walk_files(root, start))
    else:
        candidates = (
            relative(root, start / name) + ("/" if (start / name).is_dir() else "")
            for name in sorted(os.listdir(start))
            if name not in (".git", "node_modules")
        )
    files: list[str] = []
    truncated = False
    for rel in candidates:
        if fnmatch.fnmatch(rel.rstrip("/"), pattern) or fnmatch.fnmatch(Path(rel).name, pattern):
            if len(files) == limit:
                truncated = True
                break
            files.append(rel)
    return {"files": files, "count": len(files), "truncated": truncated}


def search_files(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sandbox, start = _where(args, ctx)
    flags = 0 if args.get("case_sensitive", True) else re.IGNORECASE
    try:
        regex = re.compile(args["pattern"], flags)
    except re.error as exc:
        raise ValidationError(f"pattern is not a valid regular expression: {exc}") from None
    glob = args.get("glob", "*")
    limit = args.get("limit", DEFAULT_SEARCH_LIMIT)
    root = sandbox.root
    matches: list[dict[str, Any]] = []
    files = [start] if start.is_file() else walk_files(root, start)
    for path in files:
        rel = relative(root, path)
        if not (fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(path.name, glob)) or path.is_symlink():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                if len(matches) == limit:
                    return {"matches": matches, "count": len(matches), "truncated": True}
                matches.append({"path": rel, "line": number, "text": line[:500]})
    return {"matches": matches, "count": len(matches), "truncated": False}


def get_file_info(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sandbox, path = _where(args, ctx)
    if not path.exists() and not path.is_symlink():
        raise NotFoundError(f"{args['path']} does not exist")
    info = path.lstat()
    kind = "symlink" if stat.S_ISLNK(info.st_mode) else "directory" if path.is_dir() else "file"
    return {
        "path": relative(sandbox.root, path),
        "type": kind,
        "size": info.st_size,
        "modified": info.st_mtime,
        "executable": bool(info.st_mode & stat.S_IXUSR) and kind == "file",
        "sha256": _digest(path) if kind == "file" else None,
    }


# -- writing tools ------------------------------------------------------------------------------


def write_file(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    sandbox, path = _where(args, ctx)
    if path.is_dir():
        raise ValidationError(f"{args['path']} is a directory")
    before = _digest(path)
    if not path.parent.is_dir():
        if not args.get("create_directories", True):
            raise NotFoundError(f"the directory of {args['path']} does not exist")
        path.parent.mkdir(parents=True, exist_ok=True)
    _write(path, args["content"])
    rel = relative(sandbox.root, path)
    change = Change("modify" if before else "create", sandbox.resource.name, rel, before=before, after=_digest(path))
    return ToolOutput({"path": rel, "bytes": len(args["content"].encode())}, (change,))


def edit_file(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Apply every edit to the text or none: each ``old_text`` must occur exactly once
    (or ``replace_all``), counted in the text as the earlier edits left it."""
    sandbox, path = _where(args, ctx)
    text = _text(path, args["path"])
    before = _digest(path)
    replaced = 0
    for number, edit in enumerate(args["edits"], 1):
        old, new = edit["old_text"], edit["new_text"]
        count = text.count(old)
        if count == 0:
            raise ValidationError(f"edit {number}: old_text not found in {args['path']}; nothing was changed")
        if count > 1 and not edit.get("replace_all", False):
            raise ValidationError(
                f"edit {number}: old_text occurs {count} times in {args['path']}; make it unique or set "
                "replace_all; nothing was changed"
            )
        text = text.replace(old, new)
        replaced += count
    _write(path, text)
    rel = relative(sandbox.root, path)
    change = Change("modify", sandbox.resource.name, rel, before=before, after=_digest(path))
    return ToolOutput({"path": rel, "replacements": replaced}, (change,))


def delete_file(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    sandbox, path = _where(args, ctx)
    if not path.exists() and not path.is_symlink():
        raise NotFoundError(f"{args['path']} does not exist")
    if path.is_dir() and not path.is_symlink():
        raise ValidationError(f"{args['path']} is a directory; delete_file removes files")
    before = _digest(path)
    path.unlink()
    rel = relative(sandbox.root, path)
    return ToolOutput({"path": rel, "deleted": True}, (Change("delete", sandbox.resource.name, rel, before=before),))


def move_file(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    sandbox, source = _where(args, ctx, "source")
    destination = sandbox.resolve(args["destination"])
    if not source.exists() and not source.is_symlink():
        raise NotFoundError(f"{args['source']} does not exist")
    if destination.exists() and not args.get("overwrite", False):
        raise ConflictError(f"{args['destination']} exists; set overwrite to replace it")
    if destination.is_dir():
        raise ValidationError(f"{args['destination']} is a directory")
    digest = _digest(source)
    destination.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, destination)
    root = sandbox.root
    rel_from, rel_to = relative(root, source), relative(root, destination)
    change = Change("move", sandbox.resource.name, rel_to, previous_path=rel_from, before=digest, after=digest)
    return ToolOutput({"source": rel_from, "destination": rel_to}, (change,))


def create_directory(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    sandbox, path = _where(args, ctx)
    if path.exists() and not path.is_dir():
        raise ConflictError(f"{args['path']} exists and is not a directory")
    existed = path.is_dir()
    path.mkdir(parents=True, exist_ok=True)
    rel = relative(sandbox.root, path)
    changes = () if existed else (Change("mkdir", sandbox.resource.name, rel),)
    return ToolOutput({"path": rel, "created": not existed}, changes)


def run_command(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Run a shell command in the sandbox (its own process group, killed on timeout); the
    files it changed are found by comparing the sandbox's status before and after."""
    sandbox, cwd = _where(args, ctx, "cwd")
    if not cwd.is_dir():
        raise NotFoundError(f"{args.get('cwd', '.')} is not a directory")
    before = _fingerprint(sandbox)
    done = run_process(args["command"], cwd, timeout=args.get("timeout", DEFAULT_COMMAND_TIMEOUT))
    after = _fingerprint(sandbox)
    changes = tuple(
        Change(_command_change_kind(after.get(path)), sandbox.resource.name, path, after=_digest(sandbox.root / path))
        for path in sorted(set(before) | set(after))
        if before.get(path) != after.get(path)
    )
    content = done.as_dict()
    content["changed_files"] = [c.path for c in changes]
    return ToolOutput(content, changes)


def _fingerprint(sandbox: Sandbox) -> dict[str, tuple[str, int, int]]:
    """(status, mtime, size) of every path git sees as changed in the sandbox."""
    raw = sandbox.git().run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames").stdout
    out = {}
    for entry in z_split(raw):
        code, rel = entry[:2], entry[3:]
        try:
            info = (sandbox.root / rel).lstat()
            out[rel] = (code, info.st_mtime_ns, info.st_size)
        except FileNotFoundError:
            out[rel] = (code, 0, -1)
    return out


def _command_change_kind(state: tuple[str, int, int] | None) -> str:
    if state is None:
        return "modify"  # back to the checkpointed content
    code = state[0]
    return "create" if code == "??" or "A" in code else "delete" if "D" in code else "modify"


# -- the specs ----------------------------------------------------------------------------------

BUILTIN_TOOLS: Final[tuple[tuple[ToolSpec, Handler], ...]] = (
    (
        ToolSpec(
            "read_file",
            "Read a text file of the sandbox (UTF-8), optionally a range of lines.",
            _schema(
                {
                    "path": _PATH,
                    "offset": {"type": "integer", "minimum": 1, "description": "First line, 1-based."},
                    "max_lines": {"type": "integer", "minimum": 1},
                },
                ["path"],
            ),
            READ_ONLY,
        ),
        read_file,
    ),
    (
        ToolSpec(
            "list_files",
            "List files under a directory of the sandbox (recursive by default), filtered by a glob.",
            _schema(
                {
                    "path": {**_PATH, "default": "."},
                    "pattern": {"type": "string", "default": "*", "description": "fnmatch glob on the path or name."},
                    "recursive": {"type": "boolean", "default": True},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100000},
                },
                [],
            ),
            READ_ONLY,
        ),
        list_files,
    ),
    (
        ToolSpec(
            "search_files",
            "Search the sandbox's text files for a regular expression; matching lines with their numbers.",
            _schema(
                {
                    "pattern": {"type": "string", "minLength": 1, "description": "A Python regular expression."},
                    "path": {**_PATH, "default": "."},
                    "glob": {"type": "string", "description": "Only files whose path or name matches."},
                    "case_sensitive": {"type": "boolean", "default": True},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 10000},
                },
                ["pattern"],
            ),
            READ_ONLY,
        ),
        search_files,
    ),
    (
        ToolSpec(
            "get_file_info",
            "Type, size, modification time, executable bit and sha256 of a path in the sandbox.",
            _schema({"path": _PATH}, ["path"]),
            READ_ONLY,
        ),
        get_file_info,
    ),
    (
        ToolSpec(
            "write_file",
            "Create or replace a text file in the sandbox (parent directories are created).",
            _schema(
                {
                    "path": _PATH,
                    "content": {"type": "string"},
                    "create_directories": {"type": "boolean", "default": True},
                },
                ["path", "content"],
            ),
            FILE_WRITE,
        ),
        write_file,
    ),
    (
        ToolSpec(
            "edit_file",
            "Replace exact text in a file: every edit applies, or none (each old_text must be unique "
            "unless replace_all).",
            _schema(
                {
                    "path": _PATH,
                    "edits": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {
                                "old_text": {"type": "string", "minLength": 1},
                                "new_text": {"type": "string"},
                                "replace_all": {"type": "boolean", "default": False},
                            },
                            "required": ["old_text", "new_text"],
                            "additionalProperties": False,
                        },
                    },
                },
                ["path", "edits"],
            ),
            FILE_WRITE,
        ),
        edit_file,
    ),
    (
        ToolSpec("delete_file", "Delete a file of the sandbox.", _schema({"path": _PATH}, ["path"]), FILE_WRITE),
        delete_file,
    ),
    (
        ToolSpec(
            "move_file",
            "Move or rename a file inside the sandbox.",
            _schema(
                {"source": _PATH, "destination": _PATH, "overwrite": {"type": "boolean", "default": False}},
                ["source", "destination"],
            ),
            FILE_WRITE,
        ),
        move_file,
    ),
    (
        ToolSpec(
            "create_directory",
            "Create a directory (and its parents) in the sandbox.",
            _schema({"path": _PATH}, ["path"]),
            FILE_WRITE,
        ),
        create_directory,
    ),
    (
        ToolSpec(
            "run_command",
            "Run a shell command in the sandbox with a timeout (its process group is killed when it "
            "expires); exit code, output and the files it changed.",
            _schema(
                {
                    "command": {"type": "string", "minLength": 1},
                    "cwd": {**_PATH, "default": "."},
                    "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_COMMAND_TIMEOUT},
                },
                ["command"],
            ),
            COMMAND,
        ),
        run_command,
    ),
)
