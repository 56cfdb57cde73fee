"""No network from SPARQL: ``SERVICE`` is refused unless its endpoint is allow-listed.

A real TCP listener on 127.0.0.1 stands in for a remote SPARQL endpoint; every refused
query and update must leave it without a single connection. The allow-listed case
shows the listener does see Oxigraph's request when one is sent (so the test can fail).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from cleveragents.errors import ForbiddenError
from cleveragents.graph.sparql_guard import refuse_services, service_calls
from tests.cli.test_graph_cli import Cli, initialized_cli


class Listener:
    """Accepts connections on 127.0.0.1 and counts them (closing each at once)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/sparql"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


def _queries(url: str) -> list[str]:
    return [
        f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ SERVICE SILENT <{url}> {{ ?s ?p ?o }} }}",
        f"select * where {{ ?x ?y ?z . service silent <{url}> {{ ?s ?p ?o }} }} LIMIT 1",
        f"PREFIX remote: <{url.rsplit('/', 1)[0]}/>\nSELECT * WHERE {{ SERVICE remote:sparql {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ VALUES ?e {{ <{url}> }} SERVICE SILENT ?e {{ ?s ?p ?o }} }}",
        f"ASK {{ {{ SELECT * WHERE {{ SERVICE SILENT <{url}> {{ ?s ?p ?o }} }} }} }}",
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ ?s a ?t .SERVICE<{url}>{{ ?s ?p ?o }} }}",
    ]


def test_service_queries_are_refused_and_send_nothing(cli: Cli, listener: Listener):
    for text in _queries(listener.url):
        result = cli("graph", "query", text, fmt="json")
        assert result.code == 1, (text, result.out)
        error = result.json()["error"]
        assert error["code"] == "FORBIDDEN" and "SERVICE" in error["message"], error
    assert listener.connections == 0


def test_service_in_updates_is_refused_and_sends_nothing(cli: Cli, listener: Listener):
    updates = [
        f"INSERT {{ ?s ?p ?o }} WHERE {{ SERVICE <{listener.url}> {{ ?s ?p ?o }} }}",
        f"DELETE {{ ?s ?p ?o }} WHERE {{ SERVICE SILENT <{listener.url}> {{ ?s ?p ?o }} }}",
        f"INSERT {{ <urn:a> <urn:b> ?o }} WHERE {{ OPTIONAL {{ SERVICE SILENT <{listener.url}> {{ ?s ?p ?o }} }} }}",
    ]
    for text in updates:
        result = cli("graph", "update", text, fmt="json")
        assert result.code == 1, (text, result.out)
        assert result.json()["error"]["code"] == "FORBIDDEN"
    assert listener.connections == 0
    assert cli.ok("graph", "log", fmt="json").json()["data"]["commits"] == []


def test_allow_listed_endpoint_is_called(cli: Cli, listener: Listener):
    """The guard, not an accident of the setup, is what kept the listener silent."""
    cli.ok("config", "set", "query.service_allowlist", listener.url)
    result = cli("graph", "query", f"SELECT * WHERE {{ SERVICE SILENT <{listener.url}> {{ ?s ?p ?o }} }}")
    assert result.code == 0, result.err
    assert listener.connections >= 1
    # Another endpoint is still refused.
    other = cli("graph", "query", "SELECT * WHERE { SERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }", fmt="json")
    assert other.json()["error"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize(
    "text",
    [
        'SELECT * WHERE { ?s ?p "SERVICE <http://x/> { }" }',
        "SELECT ?service WHERE { ?service a <http://x/SERVICE> }",
        "PREFIX infra: <http://x/infra#>\nSELECT * WHERE { ?s a infra:Service ; infra:SERVICE ?o }",
        "SELECT * WHERE { ?s ?p ?o } # SERVICE <http://x/> {}",
        "SELECT * WHERE { ?s ?p '''multi\nline SERVICE <http://x/>''' }",
        "SELECT * WHERE { ?s <http://x/p> 1e5 . FILTER(?s < ?o) }",
    ],
)
def test_words_that_are_not_the_keyword(text: str):
    assert service_calls(text) == []
    refuse_services(text)


@pytest.mark.parametrize(
    ("text", "endpoint"),
    [
        ("SELECT * { ?s ?p 1.SERVICE <http://e/> {} }", "http://e/"),
        ("SELECT * { ?s ?p 1e5SERVICE<http://e/>{} }", "http://e/"),
        ("SELECT * { ?s ?p ex:a .SERVICE <http://e/> {} }", "http://e/"),
        ("BASE <http://e/> SELECT * { SERVICE <sparql> {} }", "http://e/sparql"),
        ("SELECT * { SERVICE <http://e/\\u0073parql> {} }", "http://e/sparql"),
        ("SELECT * { FILTER(1<2) SERVICE SILENT <http://e/> {} }", "http://e/"),
    ],
)
def test_keyword_found_wherever_oxigraph_would_see_it(text: str, endpoint: str):
    assert [c.endpoint for c in service_calls(text)] == [endpoint]
    with pytest.raises(ForbiddenError):
        refuse_services(text)
    refuse_services(text, allowed={endpoint})
