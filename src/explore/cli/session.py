"""A repair run from the terminal: options resolved, the loop run under the live view, the gate's
question asked, what the person chose carried out, the report, summary and exit code.

Heavy imports live inside function bodies so `--help` stays instant.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from ..model.errors import ExploreError
from .exits import fail

GONE = "the demo project is removed as explore ends"

if TYPE_CHECKING:
    from ..edges.gitrepo import RepoInfo
    from ..model.config import Options
    from ..model.runstate import RunState
    from .gate import Decision
    from .live import Display


class Talk(NamedTuple):
    quiet: bool = False
    verbose: bool = False
    no_input: bool = False


def execute(
    path: Path,
    flags: dict[str, Any],
    as_json: bool,
    resume_id: str | None,
    hint: str | None,
    junit_out: Path | None = None,
    talk: Talk = Talk(),
    temporary: bool = False,
) -> None:
    """temporary: the repository is `explore demo`'s temporary project, removed when the command
    ends: no report path or command to run in it is shown as if it stayed."""
    import anyio

    from ..edges import gitrepo
    from ..model.config import MAX_PARALLEL, Options, build_options
    from ..model.events import Publisher
    from ..run import applying, repair, state
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
        repair.check_options(info.root, options)
        state.ensure_writable(info.root)
        gitrepo.exclude_explore_dir(info.repo)
        run_id = previous.run_id if previous else state.new_run_id()
        state.acquire_lock(info.root, run_id)
        try:
            while True:
                with display:
                    result = anyio.run(repair.run_repair, info, options, events, previous, hint, run_id)
                decision = _ask(info, result, as_json, talk.no_input, display)
                if decision is None or decision.choice not in ("hint", "apply"):
                    break
                previous, hint = _go_on(info, result, decision, options, display), decision.hint
        finally:
            state.release_lock(info.root, run_id)
        exit_override, result = _act(info, result, decision, display) if decision else (None, result)
    except ExploreError as exc:
        fail(str(exc), exc.exit_code, as_json)
        return
    from ..run import reports  # imported beside the baseline (run/modules_ahead)

    change = applying.change(info, result)
    report = reports.write(info.root, result, change)
    if junit_out is not None:
        junit_out.parent.mkdir(parents=True, exist_ok=True)
        junit_out.write_text(reports.junit(result), encoding="utf-8")
    if temporary and change:
        change = dataclasses.replace(change, command="")  # no command to run in it: the report line says why
    summary = reports.summary(result, None if temporary else report, change)
    if decision is None:
        for line in reports.help_needed(result):
            display.console.print(
                line, style="bold red" if line.startswith("HELP") else "", markup=False, highlight=False
            )
    display.result(reports.result_line(result))
    display.result(f"report: none kept ({GONE}: `explore demo FOLDER` keeps it)" if temporary else f"report: {report}")
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
    generator = generators.resolve_agent(options.get("agent", "auto"), options.get("agent_cmd"), options.get("agents"))

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
    from ..model.runstate import ENDED, PAUSED
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
