"""The exception hierarchy, with the numeric codes and categories of the spec.

CLI output is ``Error [code] CATEGORY: message``; exit codes are 1 for errors,
2 for usage errors and 130 for interruption.
"""

from __future__ import annotations

import errno
from typing import Any, ClassVar


class CleverAgentsError(Exception):
    """Base of every error a user may see. Subclasses fix code and category."""

    code: ClassVar[int] = 500
    category: ClassVar[str] = "INTERNAL"
    exit_code: ClassVar[int] = 1

    def __init__(
        self,
        message: str,
        *,
        detail: str | None = None,
        suggestions: list[str] | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.suggestions = suggestions or []
        self.data = data or {}

    def headline(self) -> str:
        return f"Error [{self.code}] {self.category}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.category, "status": self.code, "message": self.message}
        if self.detail:
            out["detail"] = self.detail
        if self.suggestions:
            out["suggestions"] = self.suggestions
        if self.data:
            out["data"] = self.data
        return out


class UsageError(CleverAgentsError):
    """The command line itself is wrong (unknown option, bad argument shape)."""

    code = 400
    category = "USAGE"
    exit_code = 2


class ValidationError(CleverAgentsError):
    """Input is well-formed but not acceptable (names, values, shapes)."""

    code = 422
    category = "VALIDATION_FAILED"


class ShapeViolationError(ValidationError):
    """A commit was rejected by SHACL; ``violations`` holds the report rows."""

    category = "SHACL_VIOLATION"

    def __init__(self, message: str, violations: list[Any], **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.violations = violations


class QuerySyntaxError(ValidationError):
    """Malformed SPARQL or RDF; ``line`` and ``column`` are 1-based when known."""

    category = "SYNTAX_ERROR"

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.line = line
        self.column = column


class NotFoundError(CleverAgentsError):
    code = 404
    category = "NOT_FOUND"


class ConflictError(CleverAgentsError):
    """The request conflicts with existing state (duplicate name, non-empty project)."""

    code = 409
    category = "CONFLICT"


class AccessDeniedError(CleverAgentsError):
    """A tool call or path the plan's access policy does not allow (outside the sandbox,
    on the deny-list, a write in a read-only plan, a tool not allowed for the context)."""

    code = 403
    category = "ACCESS_DENIED"


class RequestTooLargeError(CleverAgentsError):
    """A request exceeds a configured size limit (server.max_request_bytes)."""

    code = 413
    category = "REQUEST_TOO_LARGE"


class QueryTimeoutError(CleverAgentsError):
    code = 408
    category = "TIMEOUT"


class ForbiddenError(CleverAgentsError):
    """The request is well-formed but refused by policy (e.g. SPARQL SERVICE calls to
    endpoints not on the allow-list, writes to the audit trail)."""

    code = 403
    category = "FORBIDDEN"


class StoreLockedError(CleverAgentsError):
    """Another process holds the store for writing."""

    code = 423
    category = "STORE_LOCKED"


class DatabaseError(CleverAgentsError):
    code = 522
    category = "DATABASE_ERROR"


class StoreCorruptError(DatabaseError):
    """A store file is missing, truncated or damaged (RocksDB reports corruption)."""

    category = "STORE_CORRUPT"


class ContentCorruptError(DatabaseError):
    """A content-store blob is unreadable or does not match its hash."""

    category = "CONTENT_CORRUPT"


class DiskFullError(CleverAgentsError):
    """A write failed for lack of space or a file-size limit; nothing was half-written."""

    code = 507
    category = "DISK_FULL"


class ConfigurationError(CleverAgentsError):
    code = 525
    category = "CONFIGURATION_ERROR"


class DependencyMissingError(CleverAgentsError):
    """An optional external tool (e.g. Java for HermiT) is not installed."""

    code = 503
    category = "DEPENDENCY_MISSING"


class LSPUnavailable(DependencyMissingError):
    """A registered language server cannot be started here (executable or runtime missing)."""

    def __init__(self, name: str, reason: str, **kwargs: Any) -> None:
        super().__init__(f"LSP server '{name}' is unavailable: {reason}", **kwargs)
        self.name = name
        self.reason = reason


class LSPRequestError(CleverAgentsError):
    """A language server answered a request with an error, or not in time."""

    code = 502
    category = "LSP_REQUEST_FAILED"


class Interrupted(CleverAgentsError):
    code = 499
    category = "INTERRUPTED"
    exit_code = 130


# Faults of the machine, recognized by errno or by the text RocksDB (through pyoxigraph)
# gives them, so a user reads what happened instead of an INTERNAL error.
_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_DISK_FULL_TEXT = ("no space left on device", "file too large", "disk quota exceeded")
_CORRUPT_TEXT = ("corruption", "checksum mismatch", "bad magic number", "column family not found")
_STORE_FILES = "/oxigraph/"  # the RocksDB folder of a store (graph/store.py)


def fault_error(exc: BaseException) -> CleverAgentsError | None:
    """The coded error for a disk-full or damaged-store failure, or None if ``exc`` is
    neither. The commit engine publishes a commit only when it is whole, so after either
    the store holds the commits before the failed one and nothing of it."""
    text = str(exc)
    lowered = text.lower()
    if (isinstance(exc, OSError) and exc.errno in _DISK_FULL_ERRNOS) or any(t in lowered for t in _DISK_FULL_TEXT):
        where = getattr(exc, "filename", None)
        return DiskFullError(
            f"a write failed for lack of space{f' ({where})' if where else ''}: {text}",
            suggestions=[
                "free space on the disk of the data dir (agents diagnostics shows how much is free), "
                "or raise the file-size limit (ulimit -f), then run the command again: "
                "nothing of the failed write was kept"
            ],
        )
    if isinstance(exc, OSError | RuntimeError) and (any(t in lowered for t in _CORRUPT_TEXT) or _STORE_FILES in text):
        return StoreCorruptError(
            f"the store's files are damaged: {text}",
            suggestions=[
                "agents diagnostics (checks the store and the content blobs)",
                "agents graph restore BACKUP (from an agents graph backup)",
                "or move the data dir's store/ aside, agents init, and agents index --full",
            ],
        )
    return None
