"""Name matching that knows what it doesn't know: names resolve scope by scope (a local
import or binding shadows the outer meaning for its own body only), a call on an object of
a class from outside the package goes to an external symbol, and a bare self-reference is
recursion only when nothing rebinds the name. Minimal reproducers, then the same cases in
Django 5.1.15 (a pinned corpus), where each one made a wrong edge before."""

from __future__ import annotations

from pathlib import Path

import pytest

from cleveragents.analyzers.python import ANALYZERS, CALLS, EXTERNAL_SYMBOL, QUALIFIED_NAME
from cleveragents.indexing.link import SymbolTable
from cleveragents.indexing.model import FileAnalysis
from corpora.fetch import ChecksumError, FetchError, corpus_dir
from tests.analyzers.support import analyze

PY = ANALYZERS[0]


def calls_from(analysis: FileAnalysis, source: str) -> list[tuple[tuple[tuple[str, float], ...], str | None]]:
    return [(r.targets, r.simple_name) for r in analysis.references if r.predicate == CALLS and r.source == source]


def externals(analysis: FileAnalysis) -> set[str]:
    return {str(e.values[QUALIFIED_NAME][0]) for e in analysis.entities if EXTERNAL_SYMBOL in e.types}


LOCAL_ALIAS = """\
import json as codec


def dump(value):
    return codec.dumps(value)


def load_yaml(text):
    import yaml as codec

    return codec.safe_load(text)
"""


def test_a_local_import_binds_in_its_own_function_only() -> None:
    analysis = analyze(PY, "pkg/io.py", LOCAL_ALIAS)
    assert calls_from(analysis, "dump") == [((("json.dumps", 0.95),), None)]  # dumps: too common to guess
    assert calls_from(analysis, "load_yaml") == [((("yaml.safe_load", 0.95),), "safe_load")]


SHADOWED = """\
def notify(validators):
    for validator in validators:
        notify = getattr(validator, "notify", None)
        notify()


def walk(node):
    return walk(node.child)


def build(kind):
    from pkg.kinds import build

    return build(kind)


class Reader:
    def read(self):
        return read()
"""


def test_a_bare_self_reference_is_recursion_only_when_nothing_rebinds_the_name() -> None:
    analysis = analyze(PY, "pkg/rec.py", SHADOWED)
    assert calls_from(analysis, "notify") == []  # a local variable holding a callable: no edge
    assert calls_from(analysis, "walk") == [((("pkg.rec.walk", 0.95),), None)]  # real recursion
    assert calls_from(analysis, "build") == [((("pkg.kinds.build", 0.95),), "build")]  # the local import
    # A method is not in scope by its bare name: no last-resort match onto itself.
    assert calls_from(analysis, "Reader.read") == []


TYPED = """\
import argparse
import threading
from typing import Optional

from pkg.local import Local


class Runner:
    stopped: threading.Event

    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.helper = Local()

    def run(self, argv: Optional[list] = None):
        options = self.parser.parse_args(argv)
        self.helper.prepare(options)
        return self.stopped.is_set()


def serve(server: "argparse.ArgumentParser | None", lock: threading.Lock):
    server.parse_args()
    lock.acquire_nonblocking()


def rebound():
    parser = argparse.ArgumentParser()
    parser = parser.make_child()
    parser.parse_args()
"""


def test_a_call_on_an_object_of_an_outside_class_goes_to_an_external_symbol() -> None:
    analysis = analyze(PY, "pkg/run.py", TYPED)
    run = calls_from(analysis, "Runner.run")
    parse = "argparse.ArgumentParser.parse_args"
    assert ((parse, 0.95), (f"~external:pkg/run.py:{parse}", 0.95)) in [targets for targets, _ in run]
    assert all(simple != "parse_args" for _, simple in run)  # never a same-named method inside
    # A class of this package: its method, and the bare name for a member inherited inside.
    assert ((("pkg.local.Local.prepare", 0.95),), "prepare") in run
    # A class-level annotation types self.x too.
    event = "threading.Event.is_set"
    assert ((event, 0.95), (f"~external:pkg/run.py:{event}", 0.95)) in [targets for targets, _ in run]
    served = [targets[0][0] for targets, _ in calls_from(analysis, "serve")]
    assert served == [parse, "threading.Lock.acquire_nonblocking"]  # quoted and `| None` annotations
    # Rebound to something else: the type is no longer plain, so the old rule applies.
    rebound = calls_from(analysis, "rebound")
    assert ((), "parse_args") in rebound and not [t for t, _ in rebound if t and "parse_args" in t[0][0]]
    assert externals(analysis) == {parse, event, "threading.Lock.acquire_nonblocking"}


def test_external_symbols_are_never_bare_name_candidates() -> None:
    table = SymbolTable()
    table.define("py", "~external:pkg/a.py:argparse.ArgumentParser.parse_args", "urn:x#ext")
    table.define("py", "pkg.cli.Parser.parse_args", "urn:x#own")
    from cleveragents.indexing.model import Reference

    reference = Reference("f", CALLS, "py", (), "parse_args", 1)
    assert table.resolve(reference) == [("urn:x#own", 0.95)]


# -- the same cases in real code ------------------------------------------------------------


@pytest.fixture(scope="module")
def django() -> Path:
    try:
        return corpus_dir("django")
    except ChecksumError:
        raise  # a changed archive is a failure, never a skip
    except FetchError as exc:
        pytest.skip(f"corpus django could not be fetched (registry unreachable?): {exc}")


def django_calls(root: Path, path: str, source: str) -> list[tuple[tuple[tuple[str, float], ...], str | None]]:
    return calls_from(analyze(PY, path, (root / path).read_bytes()), source)


def test_django_local_import_of_query_does_not_retarget_another_method(django: Path) -> None:
    # query_utils.py: PathInfo-related code imports `from django.db.models.sql import query`
    # inside one function; Q.check's local `query = Query(None)` is an instance, not that module.
    calls = django_calls(django, "django/db/models/query_utils.py", "Q.check")
    targets = [t[0][0] for t, _ in calls if t]
    assert "django.db.models.sql.Query.add_annotation" in targets
    assert not [t for t in targets if t.startswith("django.db.models.sql.query.")]


def test_django_shadowed_names_make_no_false_recursion(django: Path) -> None:
    # password_changed(): `password_changed = getattr(validator, ...)` then `password_changed(...)`.
    calls = django_calls(django, "django/contrib/auth/password_validation.py", "password_changed")
    assert not [t for t, _ in calls if any(q.endswith(".password_changed") for q, _ in t)]
    # templatize(): `from .template import templatize` inside; the call is that one, not itself.
    calls = django_calls(django, "django/utils/translation/__init__.py", "templatize")
    assert calls == [((("django.utils.translation.template.templatize", 0.95),), "templatize")]
    # get_cookie_signer(): `Signer = import_string(...)`; `Signer(...)` is not the Signer class.
    calls = django_calls(django, "django/core/signing.py", "get_cookie_signer")
    assert not [t for t, _ in calls if any(q.startswith("django.core.signing.Signer") for q, _ in t)]


def test_django_call_on_a_threading_event_goes_outside(django: Path) -> None:
    # autoreload.py: self._stop_condition = threading.Event(); `.is_set()` matched Field.is_set before.
    calls = django_calls(django, "django/utils/autoreload.py", "BaseReloader.should_stop")
    assert calls == [
        (
            (
                ("threading.Event.is_set", 0.95),
                ("~external:django/utils/autoreload.py:threading.Event.is_set", 0.95),
            ),
            None,
        )
    ]


MEASURED_FIXES = """\
import os

fspath = getattr(os, "fspath", str)


def paths():
    return fspath("x")


def load_key(data):
    from pkg.backend import backend as ossl

    return ossl.load_key(data)


def handle(future, view):
    try:
        future.done()
    except ValueError as error:
        error.add_note_text()
    view.tobytes()
"""


def test_the_fixes_the_calibration_found() -> None:
    """Each wrong edge class basedpyright showed on the development packages (RESULTS.md, "Calibration")."""
    analysis = analyze(PY, "pkg/fix.py", MEASURED_FIXES)
    # A module-level variable holding a callable is this module's name (its entity), not a bare guess.
    assert calls_from(analysis, "paths") == [((("pkg.fix.fspath", 0.95),), "fspath")]
    # mod.f() inside def f, mod.f not found: no bare-name match onto the caller itself.
    assert calls_from(analysis, "load_key") == [((("pkg.backend.backend.load_key", 0.95),), None)]
    # An asyncio/concurrent future's `done`, a caught builtin exception's methods and
    # memoryview's `tobytes` are never guessed inside.
    assert calls_from(analysis, "handle") == []
