"""The seam between the run and what shows it: run/loop publishes typed events (model/events), the
CLI subscribes the display. A real run in this process (real git, real pytest through the local
executor, a scripted agent through the `command` generator) is watched by a plain subscriber; the
display turns the same typed events into the lines the log has always had."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from conftest import assert_no_debris, git, make_repo
from explore.cli.live import Display
from explore.edges import gitrepo
from explore.model.config import build_options
from explore.model.events import (
    BaselineFinished,
    BaselineStarted,
    CandidateEvent,
    Event,
    FanOutStarted,
    IterationStarted,
    Merged,
    Note,
    Phase,
    Publisher,
    RunFinished,
    Step,
    TestsProgress,
    UsageSpent,
)
from explore.model.phase import RunPhase, Stage
from explore.model.runstate import RunState
from explore.model.testresults import Counts
from explore.model.usage import Usage
from explore.run import repair, state

CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n\n\n"
        "def test_negative():\n    assert add(-1, 1) == 0\n"
    ),
}
AGENT = """\
import json, os, pathlib, sys
action = json.loads(pathlib.Path(sys.argv[1]).read_text()).get(os.environ["EXPLORE_CANDIDATE"], {})
for name, text in action.items():
    pathlib.Path(name).write_text(text)
"""


async def _repair(repo: Path, agent_cmd: str, publisher: Publisher, run_id: str) -> RunState:
    options = build_options(repo, {"agent": "command", "agent_cmd": agent_cmd, "parallel": 2, "flaky_reruns": 0})
    info = gitrepo.open_repo(repo)
    repair.check_options(info.root, options)
    state.ensure_writable(info.root)
    state.acquire_lock(info.root, run_id)
    try:
        return await repair.run_repair(info, options, publisher, run_id=run_id)
    finally:
        state.release_lock(info.root, run_id)


@pytest.mark.anyio
async def test_a_subscriber_receives_the_runs_typed_events_in_order(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    start = git(repo, "rev-parse", "HEAD")
    (tmp_path / "agent.py").write_text(AGENT)
    fixes = {
        "a": {"calc.py": "def add(a, b):\n    return a * b\n"},
        "b": {"calc.py": "def add(a, b):\n    return a + b\n"},
    }
    (tmp_path / "actions.json").write_text(json.dumps(fixes))
    seen: list[Event] = []
    phases: list[str] = []  # the checkpoint on disk when each candidate's result arrives

    def checkpoints(event: Event) -> None:
        if isinstance(event, CandidateEvent) and event.phase == Phase.finished:
            phases.append(json.loads((state.run_dir(repo, run_id) / "state.json").read_text())["phase"])

    run_id = state.new_run_id()
    publisher = Publisher(seen.append)
    publisher.subscribe(checkpoints)
    run = await _repair(
        repo, f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'actions.json'}", publisher, run_id
    )

    assert run.status == "succeeded", run.stop_reason
    # TestsProgress comes every few seconds while tests run: how many depends on the machine's load
    kinds = [type(e).__name__ for e in seen if not isinstance(e, (Note, CandidateEvent, TestsProgress))]
    assert kinds == [
        "BaselineStarted",
        "BaselineFinished",
        "IterationStarted",
        "FanOutStarted",
        "Merged",
        "RunFinished",
    ]
    started, finished, header, fan, merged, end = (
        e for e in seen if not isinstance(e, (Note, CandidateEvent, TestsProgress))
    )
    assert isinstance(started, BaselineStarted) and started.commit == start and "pytest" in started.command
    assert isinstance(finished, BaselineFinished) and (finished.counts.passed, finished.counts.total) == (1, 3)
    assert isinstance(header, IterationStarted) and header.n == 1 and header.strategy
    assert isinstance(fan, FanOutStarted) and fan == FanOutStarted(1, ("a", "b"))
    assert isinstance(merged, Merged) and merged.candidate == "b" and merged.after == 100.0
    assert round(merged.before, 1) == 33.3 and merged.commit == run.merged_commit == git(repo, "rev-parse", "HEAD")
    assert isinstance(end, RunFinished) and end.state is run and end.status == "succeeded"
    # each candidate's events lie between the fan-out and the merge: it starts first, and has a result
    first, last = seen.index(fan), seen.index(merged)
    for cid in "ab":
        mine = [e for e in seen if isinstance(e, CandidateEvent) and e.candidate == cid]
        assert all(first < seen.index(e) < last for e in mine)
        assert mine[0].phase == Phase.starting
        assert any(e.phase == Phase.finished and e.result is not None for e in mine)
    # the loop checkpoints after a candidate's result is published: the state then names the one before
    assert len(phases) >= 2 and phases[0] == "iteration-1-fanout" and phases[1].startswith("iteration-1-scored-")
    assert state.load(repo, run.run_id).phase == RunPhase.at(Stage.succeeded)
    assert_no_debris(repo)


def test_the_display_writes_typed_events_as_the_line_log_always_had(capsys: pytest.CaptureFixture[str]) -> None:
    display = Display("lines")
    counts = Counts(passed=2, failed=5, total=7, pass_rate=200 / 7)
    for event in (
        BaselineStarted("python -m pytest", "0123456789abcdef"),
        BaselineFinished(counts, ("t::a",)),
        Step("targets: 1 test(s), 1 failing"),
        IterationStarted(2, "aggressive", "stuck for 3 iterations"),
        FanOutStarted(2, ("a", "b")),
        CandidateEvent("a", Phase.starting),
        Merged("a", 200 / 7, 100.0, "fedcba9876543210"),
        UsageSpent(2, Usage.model_validate({"cost_usd": 0.01, "calls": 1}), Usage.model_validate({"cost_usd": 0.02})),
        Note("a [bracketed] note"),
    ):
        display.handle(event)
    lines = [line.split(maxsplit=1)[1] for line in capsys.readouterr().err.splitlines()]
    assert lines == [
        "baseline: running python -m pytest on 0123456789",
        "baseline: 2/7 passed (28.6%), 1 flaky: t::a",
        "targets: 1 test(s), 1 failing",
        "iteration 2: strategy aggressive — stuck for 3 iterations",
        "fan out: 2 candidate(s) a, b",
        "[a] starting",
        "merged candidate a: 28.6% → 100.0% (fedcba9876)",
        "usage: iteration 2 $0.0100, 1 calls, 0 tokens in (0 cache reads), 0 out; run $0.0200, 0 calls, 0 tokens in (0 cache reads), 0 out",
        "a [bracketed] note",
    ]
    view = display.view  # the live view's header, from the typed fields
    assert (view.iteration, view.strategy, view.why, view.pass_rate, view.spend) == (
        2,
        "aggressive",
        "stuck for 3 iterations",
        100.0,
        "$0.0200",
    )


def test_the_phase_is_typed_and_on_disk_the_string_it_always_was() -> None:
    class Holder(BaseModel):
        phase: RunPhase

    for text, phase in (
        ("start", RunPhase.at(Stage.start)),
        ("iterating", RunPhase.at(Stage.iterating)),
        ("iteration-12-scored-c", RunPhase.at(Stage.scored, 12, "c")),
        ("iteration-1-merged", RunPhase.at(Stage.merged, 1)),
        ("escalated", RunPhase.at("escalated")),
    ):
        held = Holder.model_validate_json(json.dumps({"phase": text}))
        assert held.phase == phase and str(phase) == text
        assert json.loads(held.model_dump_json()) == {"phase": text}
    for bad in ("iteration-1-scored", "iteration-2-start", "scored", "baseline-2", "nonsense"):
        with pytest.raises(ValidationError):
            Holder.model_validate({"phase": bad})
