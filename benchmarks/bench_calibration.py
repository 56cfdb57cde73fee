"""Calibration of the name-matched call and inheritance edges against basedpyright.

For every Python file of a package (a pinned corpus from corpora/manifest.toml; nothing
else is fetched), the indexer's own analysis step and symbol table give the name-matched
edges of each ``uko-code:calls``, ``uko-oo:inheritsFrom`` and ``uko-oo:implements``
reference with their stated confidence (``SymbolTable.resolve``, as an index run links).
The reference is the LSP pass of an index run (``lsp/enrich.py``'s ``LSPEnricher`` with the
built-in basedpyright) over the same files: its answer for the same reference, at the same
position. Per reference the server either

* names entities of the package (or external symbols, for targets outside it): an edge of
  ours is right when it is one of them. An external symbol of ours (``~external/python/X.m``)
  is right when the server also goes outside the package to a definition named ``m`` (for a
  base: the same class name); the server names where a thing is defined
  (``asyncio.queues.Queue.put``), we name it as the file reaches it (``asyncio.Queue.put``),
  so the strict agreement on the whole qualified name is reported beside;
* answers with no entity (a parameter, a local variable): every edge of ours there is wrong;
* gives no answer (an unresolved import, a dependency not installed): not judged.

Precision by confidence band (the edges' stated confidences, as the linker writes them),
and recall: of the references the server resolved to an entity of the package, the share
where name matching produced that target (at any confidence, and at >= 0.7).

    python benchmarks/bench_calibration.py                       # every package below
    python benchmarks/bench_calibration.py --packages kopf aiosql --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_call_accuracy import (  # noqa: E402
    analyze_project,
    entity_of,
    link_project,
    lsp_enrich,
    package_files,
)
from cleveragents.terms import UKO_CODE, UKO_OO  # noqa: E402
from corpora.fetch import corpus_dir  # noqa: E402

PREDICATES = {UKO_CODE + "calls": "calls", UKO_OO + "inheritsFrom": "inherits", UKO_OO + "implements": "inherits"}
EXTERNAL = "~external/python/"


@dataclass(frozen=True)
class Package:
    corpus: str  # name in corpora/manifest.toml
    folder: str  # the package: every .py under this folder of the corpus
    role: str  # "development": looked at while changing the analyzer; "held-out": measured only


PACKAGES = {
    "kopf": Package("kopf-1.37.4", "kopf", "development"),
    "advanced-alchemy": Package("advanced-alchemy-0.10.0", "advanced_alchemy", "development"),
    "cryptography": Package("cryptography-41.0.7", "src/cryptography", "held-out"),
    "jpype": Package("jpype1-1.5.2", "jpype", "held-out"),
    "aiosql": Package("aiosql-13.0", "aiosql", "held-out"),
}
# Bands by stated confidence: the values the analyzer and the linker write.
BANDS = ((0.85, "0.9"), (0.75, "0.8"), (0.65, "0.7"), (0.4, "0.5"), (0.0, "<0.4"))


def band(confidence: float) -> str:
    return next(name for low, name in BANDS if confidence >= low)


@dataclass
class Judged:
    package: str
    predicate: str
    confidence: float
    right: bool
    strict: bool  # right, and an external symbol's qualified name equals the server's
    external: bool  # our target is an external symbol
    example: str


@dataclass
class Run:
    package: str
    role: str
    files: int = 0
    references: int = 0
    answered: int = 0  # references the server answered (with or without an entity)
    edges: list[Judged] = field(default_factory=list)
    unjudged: list[float] = field(default_factory=list)  # confidences of edges the server did not answer for
    recall_sites: int = 0  # references the server resolved to an entity of the package
    recalled_any: int = 0
    recalled_07: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def _qualified(key: str) -> str:
    return key[len(EXTERNAL) :]


def _external_agrees(ours: str, theirs: set[str], predicate: str) -> tuple[bool, bool]:
    """(right, strict) for an external symbol of ours against the server's external names."""
    if ours in theirs:
        return True, True
    if predicate == "inherits":  # the class's name, wherever the server finds it defined
        name = ours.rsplit(".", 1)[-1]
        return any(t.rsplit(".", 1)[-1] == name for t in theirs), False
    method = ours.rsplit(".", 1)[-1]
    return any(t.rsplit(".", 1)[-1] == method for t in theirs), False


def _answers(
    name: str, root: Path, files: dict[str, bytes], analyzed: list, links: dict, cache: Path | None
) -> dict[str, object]:
    """The LSP pass's answers; with ``cache``, reused while the references' positions are unchanged
    (re-measuring after a change of confidences only: the server's answers do not depend on them)."""
    signature = hashlib.sha256(
        repr(sorted((p, [(r.predicate, r.position) for r in refs]) for p, refs in links.items())).encode()
    ).hexdigest()
    stored = cache / f"{name}.pickle" if cache is not None else None
    if stored is not None and stored.exists():
        saved_signature, answers = pickle.loads(stored.read_bytes())
        if saved_signature == signature:
            return answers
    answers, _ = lsp_enrich(root, files, analyzed, sorted(links))
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_bytes(pickle.dumps((signature, answers)))
    return answers


def measure(name: str, cache: Path | None = None) -> Run:
    spec = PACKAGES[name]
    root = corpus_dir(spec.corpus).resolve()
    run = Run(name, spec.role)
    started = time.perf_counter()
    files = package_files(root, spec.folder)
    analyzed = analyze_project(files)
    links, table = link_project(files, analyzed)
    run.files = len(links)
    run.seconds["analyze_and_link"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    answers = _answers(name, root, files, analyzed, links, cache)
    run.seconds["lsp"] = round(time.perf_counter() - started, 2)
    for path, references in links.items():
        resolved = answers.get(path)
        for number, reference in enumerate(references):
            predicate = PREDICATES.get(reference.predicate)
            if predicate is None:
                continue
            run.references += 1
            ours = table.resolve(reference)
            answer = resolved.references.get(number) if resolved is not None else None  # type: ignore[attr-defined]
            if answer is None:
                run.unjudged += [c for _, c in ours]
                continue
            run.answered += 1
            inside = {entity_of(iri) for iri, _, _ in answer if EXTERNAL not in iri}
            outside = {_qualified(entity_of(iri)[1]) for iri, _, _ in answer if EXTERNAL in iri}
            for iri, confidence in ours:
                target = entity_of(iri)
                external = target[1].startswith(EXTERNAL)
                if external:
                    right, strict = _external_agrees(_qualified(target[1]), outside, predicate)
                else:
                    right = strict = target in inside
                theirs = sorted(f"{p}#{k}" for p, k in inside) + sorted(outside) or ["<no entity>"]
                example = f"{path}:{reference.line} {reference.source} -> {target[1]} (server: {', '.join(theirs)})"
                run.edges.append(Judged(name, predicate, confidence, right, strict, external, example))
            if inside:
                run.recall_sites += 1
                hits = [c for iri, c in ours if entity_of(iri) in inside]
                run.recalled_any += bool(hits)
                run.recalled_07 += any(c >= 0.7 for c in hits)
    return run


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def summarize(edges: list[Judged], unjudged: list[float] = ()) -> dict[str, object]:  # type: ignore[assignment]
    """Precision per band, with the band's mean stated confidence and the share of its edges
    the server judged (the rest it could not answer for), and at >= 0.7."""
    bands: dict[str, list[Judged]] = defaultdict(list)
    for edge in edges:
        bands[band(edge.confidence)].append(edge)
    skipped = defaultdict(int)
    for confidence in unjudged:
        skipped[band(confidence)] += 1
    out: dict[str, object] = {}
    for _, name in BANDS:
        group = bands.get(name, [])
        right = sum(e.right for e in group)
        stated = sum(e.confidence for e in group) / len(group) if group else None
        precision = _ratio(right, len(group))
        out[name] = {
            "edges": len(group),
            "right": right,
            "precision": precision,
            "strict_precision": _ratio(sum(e.strict for e in group), len(group)),
            "stated": round(stated, 3) if stated is not None else None,
            "calibrated": None if precision is None or stated is None else round(abs(precision - stated), 3) <= 0.1,
            "external_edges": sum(e.external for e in group),
            "judged_share": _ratio(len(group), len(group) + skipped[name]),
            "by_value": {
                str(value): [
                    sum(e.right for e in group if e.confidence == value),
                    sum(e.confidence == value for e in group),
                ]
                for value in sorted({e.confidence for e in group}, reverse=True)
            },
        }
    high = [e for e in edges if e.confidence >= 0.7]
    out[">=0.7"] = {"edges": len(high), "precision": _ratio(sum(e.right for e in high), len(high))}
    return out


def report(runs: list[Run]) -> dict[str, object]:
    result: dict[str, object] = {"packages": {}, "pooled": {}}
    for run in runs:
        result["packages"][run.package] = {  # type: ignore[index]
            "role": run.role,
            "files": run.files,
            "references": run.references,
            "answered": run.answered,
            "judged_edges": len(run.edges),
            "unjudged_edges": len(run.unjudged),
            "recall_any": _ratio(run.recalled_any, run.recall_sites),
            "recall_at_0.7": _ratio(run.recalled_07, run.recall_sites),
            "recall_sites": run.recall_sites,
            "bands": summarize(run.edges, run.unjudged),
            "seconds": run.seconds,
            "wrong": [e.example for e in run.edges if not e.right][:40],
        }
    for role in ("development", "held-out", "all"):
        chosen = [r for r in runs if role in ("all", r.role)]
        edges = [e for r in chosen for e in r.edges]
        for predicate in ("calls", "inherits", "both"):
            picked = [e for e in edges if predicate in ("both", e.predicate)]
            skipped = [c for r in chosen for c in r.unjudged] if predicate == "both" else []
            sites = sum(r.recall_sites for r in chosen)
            result["pooled"][f"{role}/{predicate}"] = {  # type: ignore[index]
                "bands": summarize(picked, skipped),
                "recall_any": _ratio(sum(r.recalled_any for r in chosen), sites) if predicate == "both" else None,
                "recall_at_0.7": _ratio(sum(r.recalled_07 for r in chosen), sites) if predicate == "both" else None,
            }
    return result


def table(result: dict[str, object]) -> str:
    lines = [
        "| set | band | edges | judged share | precision | strict | stated (mean) | within 0.1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, value in result["pooled"].items():  # type: ignore[union-attr]
        if not key.endswith("/both") and not key.startswith("all/"):
            continue
        for name, row in value["bands"].items():
            if name == ">=0.7":
                lines.append(f"| {key} | >= 0.7 | {row['edges']} | | {row['precision']} | | | |")
                continue
            if row["edges"]:
                lines.append(
                    f"| {key} | {name} | {row['edges']} | {row['judged_share']} | {row['precision']} "
                    f"| {row['strict_precision']} "
                    f"| {row['stated']} | {row['calibrated']} |"
                )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--packages", nargs="*", default=list(PACKAGES), choices=list(PACKAGES))
    parser.add_argument("--json", type=Path, help="write the whole result here")
    parser.add_argument("--lsp-cache", type=Path, help="keep the server's answers here and reuse them")
    options = parser.parse_args()
    runs = []
    for name in options.packages:
        run = measure(name, options.lsp_cache)
        print(f"{name}: {run.files} files, {len(run.edges)} judged edges, {run.seconds}", file=sys.stderr)
        runs.append(run)
    result = report(runs)
    if options.json:
        options.json.parent.mkdir(parents=True, exist_ok=True)
        options.json.write_text(json.dumps(result, indent=1))
    print(table(result))
    for name, package in result["packages"].items():  # type: ignore[union-attr]
        print(
            f"{name} ({package['role']}): recall {package['recall_any']} (>= 0.7: {package['recall_at_0.7']}) "
            f"of {package['recall_sites']}; >= 0.7 precision {package['bands']['>=0.7']['precision']}"
        )


if __name__ == "__main__":
    main()
