"""Python call edges resolved by name, judged by jedi on a sample of requests' call sites.

benchmarks/bench_call_accuracy.py measures the whole of requests and a Django subset;
this keeps a floor under the same measurement so an analyzer or linker regression shows.
Measured (jedi 0.20.1, all 792 distinct sites of requests): precision of edges with
confidence >= 0.8 is 1.0 (234 edges), recall 0.96 over 251 sites jedi resolves in the corpus;
on this test's sample: 60 such sites, 61 edges >= 0.8, precision 1.0, recall 1.0.
"""

from __future__ import annotations

import pytest

pytest.importorskip("jedi", reason="jedi is not installed (the dev extra pins it)")

from benchmarks.bench_call_accuracy import (
    CALLS,
    CorpusRun,
    SiteResult,
    evaluate,
    link_project,
    lsp_metrics,
    metrics,
    summarize,
)
from corpora.fetch import corpus_dir

# A deterministic quarter of requests' distinct call sites: jedi takes 7-16 s on 2 cores, by load.
RATE = 0.25
PRECISION_FLOOR = 0.95  # measured 1.0
RECALL_FLOOR = 0.85  # measured 0.96 on all sites, 1.0 on this sample


@pytest.fixture(scope="module")
def requests_run() -> CorpusRun:
    return evaluate("requests", rate=RATE, jobs=2)


def test_confident_edges_are_precise_and_recall_holds(requests_run: CorpusRun) -> None:
    measured = metrics(requests_run.results)
    errors = summarize([requests_run])["top_errors"]
    # Enough sites that jedi resolves inside requests for the ratios to mean something.
    assert measured["in_corpus_sites"] >= 40, measured["sites_by_jedi_outcome"]
    in_corpus = [r for r in requests_run.results if r.category == "in-corpus"]
    confident = [(r, t) for r in in_corpus for t, c in r.edges.items() if c >= 0.8]
    assert len(confident) >= 30
    assert sum(r.correct(t) for r, t in confident) / len(confident) >= PRECISION_FLOOR, errors
    assert measured["recall"] is not None and measured["recall"] >= RECALL_FLOOR, errors


def test_no_call_edge_claims_certainty() -> None:
    # Every call reference of the project, not only the sample: 1.0 is reserved for language servers.
    root = corpus_dir("requests-2.32.3")
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "src/requests").rglob("*.py"))}
    references, table = link_project(files)
    confidences = [c for refs in references.values() for r in refs if r.predicate == CALLS for _, c in table.resolve(r)]
    assert len(confidences) > 200
    assert max(confidences) < 1.0


def test_a_wrong_target_is_judged_wrong(requests_run: CorpusRun) -> None:
    # The judge itself: jedi's target and the __init__ of a class jedi names are right, anything else is not.
    site = next(r for r in requests_run.results if r.category == "in-corpus" and r.expected)
    path, key = next(iter(site.expected))
    judge = SiteResult(site.site, expected={(path, key)})
    assert judge.correct((path, key))
    assert judge.correct((path, key + ".__init__"))
    assert not judge.correct((path, key + "_other"))
    assert not judge.correct(("src/requests/other.py", key))


def test_lsp_edges_are_judged_against_jedi_and_external_symbols_against_outside(requests_run: CorpusRun) -> None:
    # --lsp's judge: in-corpus targets as for name matching; an external symbol is right only where jedi went outside.
    inside = next(r for r in requests_run.results if r.category == "in-corpus" and r.expected)
    outside = next(r for r in requests_run.results if r.category == "outside")
    target = next(iter(inside.expected))
    right = SiteResult(inside.site, "in-corpus", expected=inside.expected, lsp={target: 1.0})
    wrong = SiteResult(inside.site, "in-corpus", expected=inside.expected, lsp={(target[0], "elsewhere"): 1.0})
    external_right = SiteResult(outside.site, "outside", lsp={}, lsp_external={"os.path.join"})
    external_wrong = SiteResult(inside.site, "in-corpus", expected=inside.expected, lsp={}, lsp_external={"x.y"})
    unanswered = SiteResult(inside.site, "in-corpus", expected=inside.expected)  # lsp None: not judged
    measured = lsp_metrics([right, wrong, external_right, external_wrong, unanswered])
    assert measured["precision"] == 0.5
    assert measured["external_agreement"] == 0.5
    assert measured["precision_all_lsp_edges"] == 0.5  # 2 right of 4
    assert measured["sites_answered"] == 4
    assert measured["recall"] == round(1 / 4, 4)  # one of the four in-corpus sites has a right edge
