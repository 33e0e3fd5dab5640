"""The commands on runs already made: `explore status`, `clean`, `rollback`, `apply` and `undo`.

Heavy imports live inside command bodies so `--help` stays instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..model.errors import ExploreError
from .exits import fail

if TYPE_CHECKING:
    from ..model.runstate import RunState


@click.command()
@click.argument("run_id", required=False)
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable list on stdout.")
def status(run_id: str | None, path: Path, as_json: bool) -> None:
    """Runs of this repository and where each stands."""
    from ..edges import gitrepo
    from ..run import housekeeping, state

    try:
        info = gitrepo.open_repo(path)
        runs = [state.load(info.root, run_id)] if run_id else state.all_runs(info.root)
    except ExploreError as exc:
        fail(str(exc), exc.exit_code, as_json)
        return
    rows = [housekeeping.describe(info, r) for r in runs]
    if as_json:
        click.echo(json.dumps({"runs": rows, "worktree_bytes": sum(r["worktree_bytes"] for r in rows)}))
        return
    if not rows:
        click.echo("no explore runs in this repository")
        return
    for row in rows:
        click.echo(
            f"{row['run_id']}  {row['status']:<11} iterations {row['iterations']:<3} "
            f"{row['baseline_pass_rate']:.1f}% → {row['pass_rate']:.1f}%  "
            f"{row['branch'] or ('applied' if row['applied'] else '-')}  worktrees {row['worktree_bytes'] / 2**20:.1f} MiB"
        )


@click.command()
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
@click.option(
    "--older-than",
    "older_than",
    metavar="AGE",
    help="Also prune runs started more than AGE ago (30m, 12h, 7d, 2w): their folder, ref and branch.",
)
@click.option("--dry-run", is_flag=True, help="List what would be removed, remove nothing.")
def clean(path: Path, older_than: str | None, dry_run: bool) -> None:
    """Remove worktrees, stale locks and processes left by dead runs (never a run's results unless
    --older-than prunes old runs)."""
    from ..edges import gitrepo
    from ..run import housekeeping

    try:
        info = gitrepo.open_repo(path)
        age = housekeeping.parse_age(older_than) if older_than is not None else None
        actions = housekeeping.clean(info, dry_run=dry_run)
        if age is not None:
            actions += housekeeping.prune(info, age, dry_run=dry_run)
    except ExploreError as exc:
        fail(str(exc), exc.exit_code, False)
        return
    if not actions:
        click.echo("nothing to clean")
    for action in actions:
        click.echo(("would remove " if dry_run else "removed ") + action)


@click.command()
@click.argument("run_id")
@click.option(
    "--to", "to", type=int, default=None, help="Iteration to go back to (0 = before any merge; default: one back)."
)
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
def rollback(run_id: str, to: int | None, path: Path) -> None:
    """Move a run's branch back to an earlier iteration (your own branch is never touched)."""
    from ..edges import gitrepo
    from ..run import housekeeping

    try:
        info = gitrepo.open_repo(path)
        message = housekeeping.rollback(info, run_id, to)
    except ExploreError as exc:
        fail(str(exc), exc.exit_code, False)
        return
    click.echo(message)


@click.command("apply")
@click.argument("run_id", required=False)
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
def apply_command(run_id: str | None, path: Path) -> None:
    """Bring a run's repair (its own commits, never a snapshot) into your current tree: a fast-forward
    when the tree is clean and unmoved, otherwise applied to your files, uncommitted, your own changes
    kept. A conflict, or a branch moved since the run started, changes nothing. Default: the latest run
    with a result not yet applied."""
    from ..edges import gitrepo
    from ..run import applying

    try:
        info = gitrepo.open_repo(path)
        message = applying.apply(
            info,
            _pick(info.root, run_id, lambda r: bool(r.merged_commit) and r.application is None, "a result to apply"),
        )
    except ExploreError as exc:
        fail(str(exc), exc.exit_code, False)
        return
    click.echo(message)


@click.command()
@click.argument("run_id", required=False)
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
def undo(run_id: str | None, path: Path) -> None:
    """Put your branch (or your files) back where a run found them; refuses when you built on its
    result or your branch moved since. Default: the latest applied run."""
    from ..edges import gitrepo
    from ..run import applying

    try:
        info = gitrepo.open_repo(path)
        message = applying.undo(
            info, _pick(info.root, run_id, lambda r: r.application is not None, "an applied result")
        )
    except ExploreError as exc:
        fail(str(exc), exc.exit_code, False)
        return
    click.echo(message)


def _pick(root: Path, run_id: str | None, fits: Any, what: str) -> RunState:
    """The run named, or the latest one that fits."""
    from ..model.errors import UsageError
    from ..run import state

    if run_id:
        return state.load(root, run_id)
    found = [r for r in state.all_runs(root) if fits(r)]
    if not found:
        raise UsageError(f"no run here has {what} (see `explore status`)")
    return max(found, key=lambda r: r.started_at)
