"""For tests that interrupt a child process with SIGINT (Ctrl+C)."""

from __future__ import annotations

import signal


def interruptible() -> None:
    """``preexec_fn`` that gives the child the default SIGINT disposition. A test runner
    started in the background inherits SIGINT as ignored (POSIX shells ignore it for
    asynchronous commands), and Python keeps an inherited "ignore" instead of raising
    KeyboardInterrupt: the child would never see the test's Ctrl+C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
