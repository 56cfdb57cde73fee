"""The use benchmark's scoring and task selection (benchmarks/bench_context_use.py), on a
real git repository built in tmp_path: a fix commit that edits one function's body
qualifies, one that adds a function or only edits tests does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from benchmarks.bench_context_use import body_present, corpus_of, fix_commits, recall

BEFORE = '''def parse(text):
    """Parse it."""
    return text.split(",")


class Box:
    def open(self):
        return 1
'''


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_a_body_counts_only_when_complete() -> None:
    body = "def f(a):\n    b = a + 1\n\n    return b"
    lines = ["x = 1", "def f(a):", "b = a + 1", "return b"]
    index = {line: [i] for i, line in enumerate(lines)}
    assert body_present(body, lines, index)  # indentation and blank lines aside
    cut = ["def f(a):", "b = a + 1", "⋮ 3 lines"]
    assert not body_present(body, cut, {line: [i] for i, line in enumerate(cut)})


def test_fix_commits_follow_the_selection_rule(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    package = repo / "src" / "requests"
    package.mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    (package / "core.py").write_text(BEFORE)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    (package / "core.py").write_text(BEFORE.replace('split(",")', 'split(";")'))
    git(repo, "commit", "-qam", "Fix the separator of parse")
    (package / "core.py").write_text(BEFORE.replace('split(",")', 'split(";")') + "\ndef added():\n    pass\n")
    git(repo, "commit", "-qam", "Fix by adding a function")  # adds a function: not a body fix
    (package / "core.py").write_text(BEFORE.replace("return 1", "return 2").replace('split(",")', 'split(";")'))
    git(repo, "commit", "-qam", "Change Box.open")  # no "fix" in the message
    tasks = fix_commits(repo, 10)
    assert [(message, gold) for _, _, message, gold in tasks] == [
        ("Fix the separator of parse", [("src/requests/core.py", "parse")])
    ]
    corpus = corpus_of(package.parent, "requests")
    [parse] = [f for f in corpus.functions if f.qualname == "parse"]
    assert recall((package / "core.py").read_text(), [parse], corpus) == 1.0
    assert recall("def parse(text):\n    ...", [parse], corpus) == 0.0
