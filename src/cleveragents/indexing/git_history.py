"""Replaying a git history into the graph: one graph commit per git commit, oldest first.

Each commit's tree is read from the object database (no checkout), indexed
incrementally against the previous one, and committed with the git sha as external id
and the author and author date as agent and time, so ``--as-of <sha>`` works on code.
Commits already imported are skipped, so an interrupted replay resumes where it stopped.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cleveragents.errors import ValidationError
from cleveragents.vocabulary import ca

from .indexer import CommitInfo, Indexer, IndexSummary, Target
from .sources import GitCommitSnapshot

_FIELDS = "%H%x1f%an <%ae>%x1f%aI%x1f%s"
GIT_COMMIT = ca.gitCommit


@dataclass(frozen=True)
class GitCommit:
    sha: str
    author: str
    date: datetime
    subject: str


def commits_to_replay(repo: Path, *, max_commits: int | None = None, since: str | None = None) -> list[GitCommit]:
    """First-parent history of HEAD, oldest first: the last ``max_commits``, or those after ``since``."""
    if not (repo / ".git").exists():
        raise ValidationError(f"{repo} is not a git checkout: --history needs a git-checkout resource")
    args = ["git", "-C", str(repo), "log", "--first-parent", f"--format={_FIELDS}"]
    if max_commits is not None:
        args.append(f"--max-count={max_commits}")
    args.append(f"{since}..HEAD" if since else "HEAD")
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ValidationError(f"git log in {repo} failed: {done.stderr.strip()}")
    commits = []
    for line in done.stdout.splitlines():
        sha, author, date, subject = line.split("\x1f", 3)
        commits.append(GitCommit(sha, author, datetime.fromisoformat(date), subject))
    return list(reversed(commits))


def replay(
    indexer: Indexer,
    target: Target,
    repo: Path,
    commits: list[GitCommit],
    imported: set[str],
    on_commit: Callable[[GitCommit, IndexSummary | None], None] | None = None,
) -> list[IndexSummary]:
    """Index each commit not yet ``imported`` (by sha); returns one summary per commit indexed."""
    blob_cache: dict[str, bytes] = {}
    summaries: list[IndexSummary] = []
    for commit in commits:
        if commit.sha in imported:
            if on_commit:
                on_commit(commit, None)
            continue
        snapshot = GitCommitSnapshot(repo, commit.sha, blob_cache)
        info = CommitInfo(
            message=f"{commit.sha[:12]} {commit.subject}",
            cause="git-commit",
            agent=commit.author,
            external_id=commit.sha,
            timestamp=commit.date,
            resource_state=((GIT_COMMIT, commit.sha),),
        )
        summary = indexer.run(target, snapshot, info)
        summaries.append(summary)
        if on_commit:
            on_commit(commit, summary)
    return summaries
