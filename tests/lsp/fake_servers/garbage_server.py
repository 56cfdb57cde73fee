"""FAKE language server for tests: answers every message with bytes that are not JSON-RPC.

Real servers that misbehave this way can't be had on demand; the client must time out,
report the server unusable, and leave no process behind."""

import sys

for _message in sys.stdin.buffer:
    sys.stdout.buffer.write(b"Content-Length: 12\r\n\r\nnot json!!!!")
    sys.stdout.buffer.write(b"\x00\xffgarbage without headers\n")
    sys.stdout.buffer.flush()
