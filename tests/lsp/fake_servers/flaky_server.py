"""FAKE language server for tests: speaks real LSP framing but misbehaves on purpose.

    flaky_server.py reject:<text>     definition requests in files whose URI contains <text>
                                      get a JSON-RPC error; others get null (no answer)
    flaky_server.py crash-after:<n>   the process exits (code 3) at its n-th definition request
    flaky_server.py slow:<seconds>    each definition request is answered after <seconds>, one
                                      at a time (a busy server working through a pipeline)
    flaky_server.py warm-up:<seconds> the first definition request is answered after <seconds>
                                      (a server analysing the workspace first), the others at once
    flaky_server.py busy:<seconds>    the same, computing all the while (a CPU-bound analysis)

Real servers fail like this only by accident; the enrichment must report the rejected
files, survive the crash, and keep the name-match edges. A slow server is no failure:
its queued requests must wait their turn."""

import json
import sys
import time

mode, _, argument = sys.argv[1].partition(":")
definitions = 0


def read() -> dict | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


while (message := read()) is not None:
    method, msg_id = message.get("method"), message.get("id")
    if msg_id is None:
        if method == "exit":
            break
        continue
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "result": {"capabilities": {"definitionProvider": True, "textDocumentSync": 1}},
            }
        )
    elif method == "textDocument/definition":
        definitions += 1
        if mode == "crash-after" and definitions >= int(argument):
            sys.exit(3)
        if mode == "slow" or (mode == "warm-up" and definitions == 1):
            time.sleep(float(argument))
        if mode == "busy" and definitions == 1:
            until = time.monotonic() + float(argument)
            while time.monotonic() < until:
                pass
        if mode == "reject" and argument in message["params"]["textDocument"]["uri"]:
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": "file rejected"}})
        else:
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})
    else:
        send({"jsonrpc": "2.0", "id": msg_id, "result": None})
