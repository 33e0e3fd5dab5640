"""A repair run from its first write to its last: the options checked before anything is written,
a new or resumed run prepared, the Runner (run/loop) driven, and the end whatever happened — the
run's files scrubbed, the user's branch moved or left, the closing record kept."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from .. import generators
from ..decide import escalation, history, redaction
from ..edges import gitrepo, history_io, homes, sandbox
from ..model import usage
from ..model.config import Options
from ..model.errors import UsageError
from ..model.events import Note, RunFinished, Subscriber
from ..model.phase import RunPhase
from ..model.runstate import RunState
from . import applying, merging, signals, state, targeting, transitions
from .kit import Kit
from .loop import Runner

log = logging.getLogger("explore.run")


def check_options(root: Path, options: Options) -> None:
    """Refuse an unknown strategy or agent before anything is written."""
    known = Kit.load_strategies(root, options)
    if options.strategy != "auto" and options.strategy not in known:
        raise UsageError(f"unknown strategy {options.strategy!r}: choose auto or one of {', '.join(sorted(known))}")
    generators.resolve_agent(options.agent, options.agent_cmd, options.agents)
    sandbox.probe(options.sandbox, tuple(options.sandbox_writable))  # `require` without bubblewrap: refused here
    if options.since:
        targeting.since_commit(root, options.since)


async def run_repair(
    info: gitrepo.RepoInfo,
    options: Options,
    emit: Subscriber,
    resume: RunState | None = None,
    hint: str | None = None,
    run_id: str | None = None,
) -> RunState:
    gitrepo.exclude_explore_dir(info.repo)  # the run's own files never count as the user's changes
    homes.sweep()  # the private homes of an explore process killed before it could remove them
    run = resume or merging.prepare_new(info, options, run_id or state.new_run_id())
    if resume:
        from .housekeeping import kill_strays

        kill_strays(run)
        applying.restore_refs(info.repo, run)
        run = transitions.resumed(run, os.getpid())
    if hint:
        run = transitions.hinted(run, hint)
    with signals.held() as early:  # a signal before the run's scope exists: the run stops at its start
        runner = Runner(info=info, options=options, run=run, emit=emit)
        if hint and not escalation.uses_hints(runner.kit.agent):
            emit(
                Note(
                    f"{runner.kit.agent} cannot use a hint: it is kept in the report; a generator that reads it: --agent anthropic or --agent-cmd"
                )
            )
        runner.save()  # before any ref: a run killed from here on is found by `resume` and `clean`
        if not resume:
            applying.move_run(info.repo, runner.run, runner.run.base_commit)
            state.fault_point("branch-created")
        runner.interrupted = bool(early.seen)
    try:
        await runner.execute()
    except UsageError:
        merging.discard(info, runner.run)
        raise
    except Exception as exc:  # a bug of explore's own: the state and report say what was put back, resume goes on
        runner.run = transitions.broken(runner.run, exc)
        runner.save()
        from .reports import write as write_report

        write_report(info.root, runner.run)
        raise
    finally:
        t0 = time.monotonic()
        runner.run = transitions.unrecorded(runner.run, usage.unrecorded(runner.kit.generator.usage, runner.run.usage))
        redaction.scrub_tree(state.run_dir(info.root, runner.run.run_id))
        log.debug("end: redaction %.2fs", time.monotonic() - t0)
    with signals.held() as late:  # the end: a signal before the user's branch moves leaves it where it is
        t0 = time.monotonic()
        drift = runner.kit.guard.drift(runner.fence) if runner.fence is not None else []
        log.debug("end: drift %.2fs", time.monotonic() - t0)
        state.fault_point("apply")
        if late.seen and runner.run.status != "interrupted":
            runner.interrupted = True
            runner.run = transitions.ended(runner.run, "interrupted", transitions.interrupted_reason(runner.run))
            emit(Note("interrupted: the result stays on the run's branch; `explore resume` finishes the run"))
        ending = merging.finish(info, runner.run, options, emit, drift)
        runner.run = transitions.finished(runner.run, ending)
        if runner.ending is not None:
            runner.run = transitions.end_booked(runner.run, time.monotonic() - runner.ending)
        runner.save(RunPhase.at(runner.run.status))
        closing = history.branch_record(runner.run)  # a result not applied: the branch holds the baseline
        if closing is not None:
            history_io.append(runner.kit.history_path, closing)
    run = runner.run
    emit(RunFinished(run.status, run.stop_reason, run))
    return run
