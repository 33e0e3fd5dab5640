"""The commands that repair: `explore run`, `explore resume` and `explore demo`, with run's option set
and the options on how explore talks to you. Each is one call of session.execute.

Heavy imports live inside command bodies so `--help` stays instant.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..model.errors import ExploreError
from .exits import fail
from .helptext import RUN_EXAMPLES, RUN_GROUPS, GroupedCommand
from .session import Talk, execute

STRATEGY_HELP = "auto | conservative | aggressive | exploratory | surgical (or one from .explore/strategies)"


def run_options(func: Any) -> Any:
    options = [
        click.option("--parallel", type=int, help="Candidates explored concurrently per iteration (default 3)."),
        click.option("--max-iterations", type=int, help="Iterations before giving up (default 10)."),
        click.option("--strategy", help=f"Force a strategy: {STRATEGY_HELP} (default auto)."),
        click.option(
            "--agent",
            multiple=True,
            help="auto | mutate | anthropic | command | claude-code | codex | gemini | qwen | aider | a [tool.explore.agents.NAME], or a fallback chain A,B,C (default auto: anthropic with ANTHROPIC_API_KEY, else mutate). Given several times: the fleet, one slot each, candidates dealt to the slots.",
        ),
        click.option(
            "--deal",
            type=click.Choice(["auto", "even"]),
            help="A fleet's candidates: dealt by what wins in this repository (auto, the default) or in turn (even).",
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
            "--apply-partial",
            is_flag=True,
            default=None,
            help="Move your branch to what the run merged even when it ends below the gate (default: only a met gate does; `explore apply RUN` takes a partial result).",
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


@click.command(cls=_RunCommand, epilog=RUN_EXAMPLES)
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
        fail(f"two repositories named: PATH {path} and --path {path_option}; give one", 2, as_json)
    path = path or path_option or Path(".")
    if issue_file is not None:
        try:
            flags["issue"] = _read_issue(issue_file)
        except ExploreError as exc:
            fail(str(exc), exc.exit_code, as_json)
    flags["agent"] = list(flags.get("agent") or ()) or None  # one --agent: a generator; several: the fleet
    flags["tests"] = list(tests) or None
    flags["test_ids"] = click.get_current_context().meta.get("explore_test_ids") or None
    execute(path, flags, as_json, resume_id=None, hint=None, junit_out=junit_out, talk=Talk(quiet, verbose, no_input))


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


@click.command()
@click.argument("run_id", required=False)
@click.option("--hint", help="Guidance from a person, passed to the generator and recorded in the report.")
@click.option("--path", "path", default=".", type=click.Path(path_type=Path), help="Repository (default: here).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON summary on stdout.")
@person_options
def resume(
    run_id: str | None, hint: str | None, path: Path, as_json: bool, quiet: bool, verbose: bool, no_input: bool
) -> None:
    """Continue an interrupted or escalated run (the latest when RUN_ID is not given)."""
    execute(path, {}, as_json, resume_id=run_id or "", hint=hint, talk=Talk(quiet, verbose, no_input))


@click.command()
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
        execute(
            target, {"agent": "mutate", "parallel": parallel}, as_json, resume_id=None, hint=None, temporary=not folder
        )
    finally:
        if folder is None:
            shutil.rmtree(target, ignore_errors=True)
