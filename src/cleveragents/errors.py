"""The exception hierarchy, with the numeric codes and categories of the spec.

CLI output is ``Error [code] CATEGORY: message``; exit codes are 1 for errors,
2 for usage errors and 130 for interruption.
"""

from __future__ import annotations

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
