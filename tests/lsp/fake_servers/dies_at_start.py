"""FAKE language server for tests: prints a reason on stderr and exits at once."""

import sys

print("fatal: this server cannot run here", file=sys.stderr)
sys.exit(3)
