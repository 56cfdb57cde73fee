"""Named manual contexts for ``agents actor run``: files snapshotted under the data dir.

A context is one JSON document, ``<data dir>/actor-contexts/<name>.json`` (or the
directory given with ``--context-dir``), holding each file's path, content and hash as it
was when added. This is the spec's "manual context" for an actor alone; plans get their
context from the ACMS instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cleveragents.errors import NotFoundError, ValidationError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class ContextFile:
    path: str
    content: str
    sha256: str
    added: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class ActorContexts:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, name: str) -> Path:
        if not _NAME.fullmatch(name):
            raise ValidationError(f"context name '{name}' must be letters, digits, '.', '_' or '-'")
        return self.root / f"{name}.json"

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.json")) if self.root.is_dir() else []

    def exists(self, name: str) -> bool:
        return self._file(name).is_file()

    def files(self, name: str) -> list[ContextFile]:
        path = self._file(name)
        if not path.is_file():
            raise NotFoundError(f"actor context '{name}' not found", suggestions=["agents actor context list"])
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return [ContextFile(**entry) for entry in data["files"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValidationError(f"actor context file {path} is damaged: {exc}") from None

    def _write(self, name: str, files: list[ContextFile]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"name": name, "files": [f.as_dict() for f in sorted(files, key=lambda f: f.path)]}, indent=2)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(tmp, self._file(name))

    def add(self, name: str, paths: list[Path], *, recursive: bool = False) -> int:
        current = {f.path: f for f in self.files(name)} if self.exists(name) else {}
        added = 0
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        for path in paths:
            for file in _expand(path, recursive):
                try:
                    data = file.read_bytes()
                except OSError as exc:
                    raise ValidationError(f"cannot read {file}: {exc.strerror}") from None
                if len(data) > MAX_FILE_BYTES:
                    raise ValidationError(f"{file} is larger than {MAX_FILE_BYTES} bytes")
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    raise ValidationError(f"{file} is not a UTF-8 text file") from None
                key = _display(file)
                current[key] = ContextFile(key, text, hashlib.sha256(data).hexdigest(), stamp)
                added += 1
        self._write(name, list(current.values()))
        return added

    def remove(self, name: str, paths: list[str]) -> int:
        current = {f.path: f for f in self.files(name)}
        targets = {_display(Path(p)) for p in paths} | set(paths)
        kept = [
            f
            for key, f in current.items()
            if key not in targets and not any(key.startswith(t.rstrip("/") + "/") for t in targets)
        ]
        self._write(name, kept)
        return len(current) - len(kept)

    def clear(self, name: str) -> int:
        count = len(self.files(name))
        self._write(name, [])
        return count

    def delete(self, name: str) -> None:
        self.files(name)
        self._file(name).unlink()

    def export(self, name: str, output: Path) -> int:
        files = self.files(name)
        output.write_text(json.dumps({"name": name, "files": [f.as_dict() for f in files]}, indent=2), encoding="utf-8")
        return len(files)

    def import_(self, name: str, source: Path) -> int:
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
            files = [ContextFile(**entry) for entry in data["files"]]
        except OSError as exc:
            raise ValidationError(f"cannot read {source}: {exc.strerror}") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise ValidationError(f"{source} is not an exported actor context: {exc}") from None
        self._write(name, files)
        return len(files)


def _expand(path: Path, recursive: bool) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        found = path.rglob("*") if recursive else path.iterdir()
        return sorted(p for p in found if p.is_file() and not any(part.startswith(".") for part in p.parts[-3:]))
    raise NotFoundError(f"no such file or directory: {path}")


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())
