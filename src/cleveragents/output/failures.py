"""How exceptions become user-facing errors, and the mark that says one was rendered."""

from __future__ import annotations

from cleveragents.errors import CleverAgentsError, Interrupted, fault_error

UNEXPECTED_MESSAGE = "An unexpected error occurred"
CANCELLED_EXIT_CODE = 130
_RENDERED = "_cleveragents_rendered"


def as_error(exc: BaseException) -> CleverAgentsError:
    """The error to show for ``exc``: itself; a coded error for a full disk or a damaged
    store; otherwise a generic INTERNAL error that leaks nothing."""
    if isinstance(exc, CleverAgentsError):
        return exc
    return fault_error(exc) or CleverAgentsError(UNEXPECTED_MESSAGE)


def is_cancellation(exc: BaseException) -> bool:
    return isinstance(exc, KeyboardInterrupt | Interrupted)


def exit_code_for(exc: BaseException) -> int:
    """130 for a cancellation, the error class's exit code otherwise (1 if unexpected)."""
    if is_cancellation(exc):
        return CANCELLED_EXIT_CODE
    return as_error(exc).exit_code


def system_exit_code(exc: SystemExit) -> int:
    """The process exit code ``sys.exit(code)`` means: an int as is, None is 0, a message is 1."""
    return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


def mark_rendered(exc: BaseException) -> None:
    """Record that a session already printed this exception, so the CLI won't print it twice."""
    setattr(exc, _RENDERED, True)


def was_rendered(exc: BaseException) -> bool:
    return bool(getattr(exc, _RENDERED, False))
