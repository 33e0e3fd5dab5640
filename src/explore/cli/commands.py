"""The click commands: thin — options in, one typed call, a message and an exit code out.

Heavy imports live inside command bodies so `--help` stays instant.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from ..model.errors import ExploreError
from .helptext import RUN_EXAMPLES, RUN_GROUPS, GroupedCommand

if TYPE_CHECKING:
    from ..edges.gitrepo import RepoInfo
    from ..model.config import Options
    from ..model.models import RunState
    from .gate import Decision
    from .live import Display

STRATEGY_HELP = "auto | conservative | aggressive | exploratory | surgical (or one from .explore/strategies)"


def _fail(message: str, code: int, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"status": "error", "exit_code": code, "error": message}))
    click.echo(f"explore: error: {message}", err=True)
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(None, "-V", "--version", package_name="explore-runner", prog_name="explore")
def main() -> None:
    """Repair failing test suites: candidate fixes explored side by side in git worktrees,
    scored by the tests they make pass, the best merged on a run branch."""


def run_options(func: Any) -> Any:
    options = [
        click.option("--parallel", type=int, help="Candidates explored concurrently per iteration (default 3)."),
        click.option("--max-iterations", type=int, help="Iterations before giving up (default 10)."),
        click.option("--strategy", help=f"Force a strategy: {STRATEGY_HELP} (default auto)."),
        click.option(
            "--agent",
            help="auto | mutate | anthropic | command | claude-code | codex | gemini | qwen | aider | a [tool.explore.agents.NAME], or a fallback chain A,B,C (default auto: anthropic with ANTHROPIC_API_KEY, else mutate).",
        ),
        click.option("--agent-cmd", help="For --agent command: a shell command run in each candidate's worktree."),
        click.option(
            "--test-cmd", help="Shell command running the tests (default: pytest, auto-detected). May hold {junit}."
        ),
        click.option("--junit-xml", help="Where --test-cmd writes JUnit XML, relative to the repository root."),
        click.option(
            "--python",
            metavar="PATH",
            help="Interpreter for the default pytest command (default: [tool.explore] python, else $VIRTUAL_ENV's, else python on PATH).",
        ),
        click.option(
            "--branch-timeout", type=float, help="Seconds per candidate, generator and tests together (default 600)."
        ),
        click.option(
            "--test-timeout",
            type=float,
            help="Seconds per test, pytest only (default: 30 in the baseline, then 5x its slowest passing test, at least 10).",
        ),
        click.option("--target-pass-rate", type=float, help="Quality gate in percent (default 100)."),
        click.option(
            "--no-apply",
            is_flag=True,
            default=None,
            help="Leave the result on explore/<run-id>; do not move your branch.",
        ),
        click.option(
            "--branch-memory",
            help="Memory cap per candidate's process tree, e.g. 512M (default: half the RAM / --parallel).",
        ),
        click.option("--budget-usd", type=float, help="Stop before LLM calls would cost more than this."),
        click.option("--budget-tokens", type=int, help="Stop before LLM calls would use more tokens than this."),
        click.option(
            "--search-budget",
            metavar="Nx|DURATION",
            help="Give up after this long with no repair in sight: N times the suite's time, or e.g. 90s, 5m (default: 10x, at least 30s, for mutate; none for a model-driven generator).",
        ),
        click.option(
            "--executor",
            type=click.Choice(["local", "ray"]),
            help="Where test jobs run: local worktrees (default) or Ray (RAY_ADDRESS, else a local Ray).",
        ),
        click.option(
            "--shards",
            type=int,
            help="Split full-suite runs over N shards by test file (1 = off; default: the free slots the suite's time fills).",
        ),
        click.option(
            "--junit-out",
            type=click.Path(path_type=Path),
            help="Write the final test results as JUnit XML here (for CI).",
        ),
        click.option(
            "--reports-dir", help="Write a debug report per iteration to DIR/<topic>/NNN_<slug>.md (for review)."
        ),
        click.option(
            "--commit-reports",
            is_flag=True,
            default=None,
            help="Commit the debug reports on the run branch with each iteration's commit.",
        ),
        click.option(
            "--json", "as_json", is_flag=True, help="Print the JSON summary on stdout; progress stays on stderr."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return person_options(func)


def person_options(func: Any) -> Any:
    """How explore talks to the person at the terminal (never stored with the run)."""
    options = [
        click.option("-q", "--quiet", is_flag=True, help="Only the result and errors on stderr."),
        click.option(
            "-v", "--verbose", is_flag=True, help="Also each test run's command and log, and the generator's messages."
        ),
        click.option("--no-input", is_flag=True, help="Never ask: an escalation or a run below the gate just exits."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


class _RunCommand(GroupedCommand):
    """`explore run [PATH] [-- TEST_IDS…]`: what follows `--` are target test ids, never PATH."""

    groups = RUN_GROUPS

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["explore_test_ids"] = args[:at], args[at + 1 :]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "[-- TEST_IDS]..."]


@main.command(cls=_RunCommand, epilog=RUN_EXAMPLES)
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option(
    "--path", "path_option", type=click.Path(path_type=Path), help="Repository (default: here); the same as PATH."
)
@run_options
@click.option(
    "--tests",
    "tests",
    multiple=True,
    metavar="PATTERN",
    help="Target tests by glob over node ids (repeatable); only targets are repaired, no other test may break.",
)
@click.option(
    "--since",
    metavar="REF|last-green",
    help="Targets = tests failing now that passed at REF, or at the last green run in .explore/history.jsonl.",
)
@click.option(
    "--issue",
    "issue_file",
    metavar="FILE|-",
    help="A bug report (markdown or text; - reads stdin): tests reproducing it are written and committed first, then repaired.",
)
def run(
    path: Path | None,
    path_option: Path | None,
    as_json: bool,
    junit_out: Path | None,
    tests: tuple[str, ...],
    quiet: bool,
    verbose: bool,
    no_input: bool,
    issue_file: str | None,
    **flags: Any,
) -> None:
    """Repair the failing tests of the git repository at PATH (default: here); with TEST_IDS after
    `--`, --tests or --since, only those target tests; with --issue, the bug a report describes."""
    if path and path_option and path.resolve() != path_option.resolve():
        _fail(f"two repositories named: PATH {path} and --path {path_option}; give one", 2, as_json)
    path = path or path_option or Path(".")
    if issue_file is not None:
        try:
            flags["issue"] = _read_issue(issue_file)
        except ExploreError as exc:
            _fail(str(exc), exc.exit_code, as_json)
    flags["tests"] = list(tests) or None
    flags["test_ids"] = click.get_current_context().meta.get("explore_test_ids") or None
    _execute(path, flags, as_json, resume_id=None, hint=None, junit_out=junit_out, talk=Talk(quiet, verbose, no_input))


def _read_issue(source: str) -> str:
    from ..model.errors import UsageError

    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"--issue {source}: cannot read the bug report: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if not text.strip():
        raise UsageError(f"--issue {source}: the bug report is empty")
    return text


@main.command()
@click.argument("run_id", required=False)
@click.option("--hint", help="Guidance from a person, passed to the generator and recorded in the report.")
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON summary on stdout.")
@person_options
def resume(
    run_id: str | None, hint: str | None, path: Path, as_json: bool, quiet: bool, verbose: bool, no_input: bool
) -> None:
    """Continue an interrupted or escalated run (the latest when RUN_ID is not given)."""
    _execute(path, {}, as_json, resume_id=run_id or "", hint=hint, talk=Talk(quiet, verbose, no_input))


class Talk(NamedTuple):
    quiet: bool = False
    verbose: bool = False
    no_input: bool = False


def _execute(
    path: Path,
    flags: dict[str, Any],
    as_json: bool,
    resume_id: str | None,
    hint: str | None,
    junit_out: Path | None = None,
    talk: Talk = Talk(),
) -> None:
    import anyio

    from ..edges import gitrepo
    from ..model.config import MAX_PARALLEL, Options, build_options
    from ..model.events import Publisher
    from ..run import applying, loop, reports, state
    from .live import Display, Verbosity, choose_mode

    verbosity: Verbosity = "quiet" if talk.quiet else ("verbose" if talk.verbose else "normal")
    display = Display(choose_mode(as_json, sys.stderr.isatty()), verbosity)
    events = Publisher(display.handle)
    decision = None
    try:
        info = gitrepo.open_repo(path)
        previous = None
        if resume_id is not None:
            previous = _resumable(info.root, resume_id)
            options = Options.model_validate(previous.options)
        else:
            options = build_options(info.root, flags)
        cores = os.cpu_count() or 1
        cap = min(4 * cores, MAX_PARALLEL)
        if options.parallel > cap:
            display.note(
                f"--parallel {options.parallel} capped to {cap} (at most 4 per core on this {cores}-core machine)"
            )
            options.parallel = cap
        loop.check_options(info.root, options)
        state.ensure_writable(info.root)
        gitrepo.exclude_explore_dir(info.repo)
        run_id = previous.run_id if previous else state.new_run_id()
        state.acquire_lock(info.root, run_id)
        try:
            while True:
                with display:
                    result = anyio.run(loop.run_repair, info, options, events, previous, hint, run_id)
                decision = _ask(info, result, as_json, talk.no_input, display)
                if decision is None or decision.choice not in ("hint", "apply"):
                    break
                previous, hint = _go_on(info, result, decision, options, display), decision.hint
        finally:
            state.release_lock(info.root, run_id)
        exit_override, result = _act(info, result, decision, display) if decision else (None, result)
    except ExploreError as exc:
        _fail(str(exc), exc.exit_code, as_json)
        return
    change = applying.change(info, result)
    report = reports.write(info.root, result, change)
    if junit_out is not None:
        junit_out.parent.mkdir(parents=True, exist_ok=True)
        junit_out.write_text(reports.junit(result), encoding="utf-8")
    summary = reports.summary(result, report, change)
    if decision is None:
        for line in reports.help_needed(result):
            display.console.print(
                line, style="bold red" if line.startswith("HELP") else "", markup=False, highlight=False
            )
    f = result.current
    display.result(f"{result.status}: {f.passed}/{f.total} passed ({f.pass_rate:.1f}%) — {result.stop_reason or ''}")
    display.result(f"report: {report}")
    if change:
        display.change(change)
    if as_json:
        click.echo(summary.model_dump_json())
    sys.exit(summary.exit_code if exit_override is None else exit_override)


def _ask(info: RepoInfo, result: RunState, as_json: bool, no_input: bool, display: Display) -> Decision | None:
    """The gate: a person at a terminal is asked what to do; anyone else gets the exit code."""
    from .. import generators
    from ..run import state
    from . import gate

    if not gate.should_ask(
        result, as_json=as_json, no_input=no_input, stdin_tty=sys.stdin.isatty(), stderr_tty=sys.stderr.isatty()
    ):
        return None
    destructive = gate.destructive_candidate(result, state.run_dir(info.root, result.run_id))
    options = result.options
    generator = generators.resolve_agent(options.get("agent", "auto"), options.get("agent_cmd"))

    def say(text: str) -> None:
        display.console.print(text, markup=False, highlight=False)

    return gate.ask(result, say, lambda prompt: display.console.input(prompt, markup=False), destructive, generator)


def _go_on(info: RepoInfo, result: RunState, decision: Decision, options: Options, display: Display) -> RunState:
    """Hint or an applied destructive fix: the same run resumes, with a fresh allowance of iterations."""
    from ..edges import gitrepo
    from ..run import applying, state
    from . import gate

    resumed = result.model_copy(update={"branch": result.branch or f"explore/{result.run_id}"})
    if decision.choice == "apply":
        found = gate.destructive_candidate(result, state.run_dir(info.root, result.run_id))
        assert found is not None
        message = f"explore: candidate {found.cid} applied by a person despite: {found.what}"
        new = gitrepo.commit_patch(info.repo, result.current_commit, found.patch.read_bytes(), message)
        applying.move_run(info.repo, resumed, new)
        resumed = resumed.model_copy(update={"current_commit": new, "merged_commit": new})
        display.note(f"applied candidate {found.cid} as {new[:10]} on {resumed.branch}; re-testing")
    options.max_iterations = max(options.max_iterations, len(result.iterations) + options.no_progress_limit)
    return resumed


def _act(info: RepoInfo, result: RunState, decision: Decision, display: Display) -> tuple[int | None, RunState]:
    """Roll back, skip or abort, at once; the exit code when it differs from the run's, and the run
    as it now is (aborted: failed, without its branch)."""
    from ..edges import gitrepo
    from ..run import housekeeping, known_failures, state

    if decision.choice == "rollback":
        display.result(housekeeping.rollback(info, result.run_id, decision.to))
    elif decision.choice == "skip":
        where = known_failures.record(
            info.root, {t: result.failure_messages.get(t, "") for t in result.current_failing}, result.run_id
        )
        display.result(f"recorded {len(result.current_failing)} known failure(s) in {where}; later runs leave them out")
    elif decision.choice == "abort":
        if result.branch:  # what was applied to your branch stays there
            gitrepo.delete_branch(info.repo, result.branch)
        for action in housekeeping.clean(info):
            display.note(f"removed {action}")
        aborted = result.model_copy(
            update={"branch": None, "status": "failed", "stop_reason": "aborted by a person at the gate"}
        )  # not resumable
        state.save(info.root, aborted)
        return 3, aborted
    return None, result


def _resumable(root: Path, run_id: str) -> RunState:
    from ..model.errors import UsageError
    from ..model.models import ENDED, PAUSED
    from ..run import state

    runs = state.all_runs(root)
    if run_id:
        chosen = state.load(root, run_id)
    else:
        candidates = [r for r in runs if r.status in PAUSED | {"running"} or not r.finished]
        if not candidates:
            raise UsageError("no interrupted or escalated run to resume here (see `explore status`)")
        chosen = max(candidates, key=lambda r: r.started_at)
    if chosen.status in ENDED and chosen.finished:
        raise UsageError(f"run {chosen.run_id} has ended ({chosen.status}); start a new one with `explore run`")
    if chosen.status == "running" and state.pid_alive(chosen.pid or -1):
        raise UsageError(f"run {chosen.run_id} is still running (pid {chosen.pid})")
    return chosen


@main.command()
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
        _fail(str(exc), exc.exit_code, as_json)
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


@main.command()
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
        _fail(str(exc), exc.exit_code, False)
        return
    if not actions:
        click.echo("nothing to clean")
    for action in actions:
        click.echo(("would remove " if dry_run else "removed ") + action)


def _register_bench() -> None:
    from ..bench.command import bench

    main.add_command(bench)


_register_bench()


@main.command()
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
        _fail(str(exc), exc.exit_code, False)
        return
    click.echo(message)


@main.command("apply")
@click.argument("run_id", required=False)
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
def apply_command(run_id: str | None, path: Path) -> None:
    """Bring a run's repair (its own commits, never a snapshot) into your current tree: a fast-forward
    when the tree is clean and unmoved, otherwise applied to your files, uncommitted, your own changes
    kept. A conflict changes nothing. Default: the latest run with a result not yet applied."""
    from ..edges import gitrepo
    from ..run import applying

    try:
        info = gitrepo.open_repo(path)
        message = applying.apply(
            info,
            _pick(info.root, run_id, lambda r: bool(r.merged_commit) and r.application is None, "a result to apply"),
        )
    except ExploreError as exc:
        _fail(str(exc), exc.exit_code, False)
        return
    click.echo(message)


@main.command()
@click.argument("run_id", required=False)
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
def undo(run_id: str | None, path: Path) -> None:
    """Put your branch (or your files) back where a run found them; refuses when you built on its
    result. Default: the latest applied run."""
    from ..edges import gitrepo
    from ..run import applying

    try:
        info = gitrepo.open_repo(path)
        message = applying.undo(
            info, _pick(info.root, run_id, lambda r: r.application is not None, "an applied result")
        )
    except ExploreError as exc:
        _fail(str(exc), exc.exit_code, False)
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


@main.command()
@click.argument("folder", required=False, type=click.Path(path_type=Path))
@click.option("--parallel", type=int, default=3, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON summary on stdout.")
def demo(folder: Path | None, parallel: int, as_json: bool) -> None:
    """Create a small buggy project (in FOLDER, kept; or a temp folder, removed at the end) and repair
    it offline with mutate."""
    import shutil

    from .demo import create_demo

    target = create_demo(folder)
    click.echo(
        f"demo project: {target}" + ("" if folder else " (removed at the end; give a FOLDER to keep it)"), err=True
    )
    try:
        _execute(target, {"agent": "mutate", "parallel": parallel}, as_json, resume_id=None, hint=None)
    finally:
        if folder is None:
            shutil.rmtree(target, ignore_errors=True)
