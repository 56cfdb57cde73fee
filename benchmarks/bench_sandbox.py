"""Sandbox checkpoints and rollbacks on a worktree of Django (issue 15's numbers).

Django 5.1.15 (the pinned corpus, ~6,900 files) is committed into a temporary git
repository; a plan's sandbox of it is a git worktree. Each round changes 10 files (8
edits, 1 new file, 1 deletion) and times ``Sandbox.checkpoint``; then it changes 10 more
files and times ``Sandbox.rollback`` to the previous checkpoint (the rollback restores
the 10 files and removes the new one). Baseline in the same run: the raw git commands a
checkpoint needs at least (``git add -A`` + ``git commit``, run by hand on a second
worktree with the same changes), the naive rollback (``git reset --hard`` + ``git clean
-fd``) and one ``git status`` (a single scan of the tree, the floor of any rollback that
does not track the changes itself), so the sandbox's own overhead is visible.

Targets: checkpoint under 150 ms, rollback under 300 ms (medians).

    python benchmarks/bench_sandbox.py --rounds 15
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleveragents.sandbox import Sandbox, SandboxResource  # noqa: E402
from cleveragents.sandbox.git import IDENTITY, SETTINGS  # noqa: E402
from corpora.fetch import corpus_dir  # noqa: E402

CHECKPOINT_TARGET_MS = 150
ROLLBACK_TARGET_MS = 300


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *SETTINGS, *args], cwd=repo, check=True, capture_output=True, env={**IDENTITY, "PATH": "/usr/bin:/bin"}
    )


def change_ten(root: Path, files: list[Path], round_: int, tag: str) -> None:
    """8 edits, 1 new file, 1 deletion (of the previous round's new file when there is one)."""
    for path in files[:8]:
        target = root / path
        target.write_text(target.read_text() + f"\n# {tag} {round_}\n")
    (root / f"bench_new_{tag}_{round_}.py").write_text(f"ROUND = {round_}\n")
    previous = root / f"bench_new_{tag}_{round_ - 1}.py"
    victim = previous if previous.exists() else root / files[8]
    victim.unlink()


def cpu_ms() -> float:
    """CPU time (user + system) of this process and its finished children, in ms: what an
    operation costs whatever else the machine is doing (wall time on a shared machine
    also counts the time spent waiting for a core)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime) * 1000


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
        "min_ms": round(ordered[0], 1),
        "max_ms": round(ordered[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    try:
        repo = work / "django"
        started = time.perf_counter()
        shutil.copytree(corpus_dir("django"), repo, symlinks=True)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "django 5.1.15")
        files_total = sum(1 for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
        setup_s = time.perf_counter() - started
        python_files = sorted(p.relative_to(repo) for p in (repo / "django/db/models").rglob("*.py"))[:20]

        resource = SandboxResource(
            "local/django", "git-checkout", str(repo), "https://cleveragents.ai/id/resource/01JB"
        )
        sandbox = Sandbox.open(work / "data", "01JAAAAAAAAAAAAAAAAAAAAAAA", resource)
        clock = time.perf_counter()
        root = sandbox.root
        create_ms = (time.perf_counter() - clock) * 1000

        baseline_tree = work / "baseline"
        git(repo, "worktree", "add", "-q", "-b", "baseline", str(baseline_tree))

        checkpoints, rollbacks, raw_commits, raw_resets, scans = [], [], [], [], []
        cpu: dict[str, list[float]] = {k: [] for k in ("checkpoint", "rollback", "raw_commit", "raw_reset", "scan")}
        previous = sandbox.checkpoint("start")
        for round_ in range(1, args.rounds + 1):
            change_ten(root, python_files, round_, "cp")
            clock, spent = time.perf_counter(), cpu_ms()
            taken = sandbox.checkpoint(f"round {round_}")
            checkpoints.append((time.perf_counter() - clock) * 1000)
            cpu["checkpoint"].append(cpu_ms() - spent)
            assert len(taken.files) == 10, taken.files

            change_ten(baseline_tree, python_files, round_, "cp")
            clock, spent = time.perf_counter(), cpu_ms()
            git(baseline_tree, "add", "-A")
            git(baseline_tree, "commit", "-q", "-m", f"round {round_}")
            raw_commits.append((time.perf_counter() - clock) * 1000)
            cpu["raw_commit"].append(cpu_ms() - spent)

            change_ten(baseline_tree, python_files[10:], round_, "rb")
            clock, spent = time.perf_counter(), cpu_ms()
            git(baseline_tree, "reset", "-q", "--hard")
            git(baseline_tree, "clean", "-q", "-f", "-d")
            raw_resets.append((time.perf_counter() - clock) * 1000)
            cpu["raw_reset"].append(cpu_ms() - spent)
            clock, spent = time.perf_counter(), cpu_ms()
            git(baseline_tree, "status", "--porcelain", "--untracked-files=all")
            scans.append((time.perf_counter() - clock) * 1000)
            cpu["scan"].append(cpu_ms() - spent)

            change_ten(root, python_files[10:], round_, "rb")
            clock, spent = time.perf_counter(), cpu_ms()
            sandbox.rollback(taken.id)
            rollbacks.append((time.perf_counter() - clock) * 1000)
            cpu["rollback"].append(cpu_ms() - spent)
            previous = taken
        assert not sandbox.changed_files() or previous.id == sandbox.git().rev("HEAD")

        result = {
            "corpus": "django 5.1.15",
            "files": files_total,
            "rounds": args.rounds,
            "setup_s": round(setup_s, 2),
            "sandbox_create_ms": round(create_ms, 1),
            "checkpoint": summary(checkpoints),
            "rollback": summary(rollbacks),
            "baseline_raw_git_add_commit": summary(raw_commits),
            "baseline_raw_git_reset_hard_clean": summary(raw_resets),
            "floor_one_git_status_scan": summary(scans),
            "cpu_median_ms": {k: round(statistics.median(v), 1) for k, v in cpu.items()},
            "load_average_1m_at_end": round(os.getloadavg()[0], 1),
            "checkpoint_over_baseline": round(statistics.median(checkpoints) / statistics.median(raw_commits), 2),
            "rollback_over_baseline": round(statistics.median(rollbacks) / statistics.median(raw_resets), 2),
            "targets": {
                "checkpoint_ms": CHECKPOINT_TARGET_MS,
                "rollback_ms": ROLLBACK_TARGET_MS,
                "checkpoint_met": statistics.median(checkpoints) < CHECKPOINT_TARGET_MS,
                "rollback_met": statistics.median(rollbacks) < ROLLBACK_TARGET_MS,
            },
        }
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
