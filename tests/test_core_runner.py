"""The Runner (run/loop) driven in this process on a real git repository: the baseline and each
candidate's tests are real pytest processes in real worktrees (local executor); the generator is
the `command` generator running a small scripted agent in each candidate's worktree, which makes
the change its candidate letter names (as an external coding agent's varying answers would)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import assert_no_debris, git, make_repo
from explore.edges import gitrepo
from explore.model.config import build_options
from explore.model.events import (
    BaselineFinished,
    BaselineStarted,
    CandidateEvent,
    Escalated,
    Event,
    FanOutStarted,
    IterationStarted,
    Merged,
    Note,
    Phase,
    RunFinished,
)
from explore.model.runstate import EscalationCategory, RunState
from explore.run import reports, state
from explore.run.repair import check_options, run_repair

pytestmark = pytest.mark.anyio

CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n\n\n"
        "def test_negative():\n    assert add(-1, 1) == 0\n"
    ),
}
FIX = {"calc.py": "def add(a, b):\n    return a + b\n"}
WRONG = {"calc.py": "def add(a, b):\n    return a * b\n"}
TAMPER = {"tests/test_calc.py": "def test_add():\n    assert True\n"}

AGENT = """\
import json, os, pathlib, sys
action = json.loads(pathlib.Path(sys.argv[1]).read_text()).get(os.environ["EXPLORE_CANDIDATE"], {})
for name, text in action.get("write", {}).items():
    pathlib.Path(name).write_text(text)
if "fail" in action:
    print(action["fail"])
    sys.exit(1)
"""


def agent(tmp_path: Path, actions: dict[str, dict]) -> str:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "actions.json").write_text(json.dumps(actions))
    return f"{sys.executable} {tmp_path / 'agent.py'} {tmp_path / 'actions.json'}"


async def repair(
    repo: Path, agent_cmd: str, listen: Callable[[Event], None] | None = None, **flags: object
) -> tuple[RunState, list[Event]]:
    """What `explore run --agent command --agent-cmd …` does (cli/session), in this process: the
    options read, the run's folder kept out of git's sight, the repository locked, the loop run
    with a subscriber that keeps every event it publishes (and hands it to listen). The run's state
    and its events."""
    options = build_options(
        repo, {"agent": "command", "agent_cmd": agent_cmd, "parallel": 3, "flaky_reruns": 0, **flags}
    )
    info = gitrepo.open_repo(repo)
    check_options(info.root, options)
    state.ensure_writable(info.root)
    run_id = state.new_run_id()
    state.acquire_lock(info.root, run_id)
    events: list[Event] = []

    def heard(event: Event) -> None:
        events.append(event)
        if listen is not None:
            listen(event)

    try:
        return await run_repair(info, options, heard, run_id=run_id), events
    finally:
        state.release_lock(info.root, run_id)


FLAKY_ID = "tests/test_flaky.py::test_first_run_fails"


def flaky_test(counter: Path, gate: Path | None = None) -> str:
    """Fails the first time it runs and passes after (a flake of the environment). gate: a later run
    waits for that file first (the test's subscriber writes it: `started`) and fails without it."""
    waits = (
        f"    gate, until = Path({str(gate)!r}), time.monotonic() + 60\n"
        "    while runs and not gate.exists():  # the file the test writes once a candidate has started\n"
        "        assert time.monotonic() < until, 'no candidate started while the baseline rerun ran'\n"
        "        time.sleep(0.05)\n"
        if gate is not None
        else ""
    )
    return (
        "import time\nfrom pathlib import Path\n\n\ndef test_first_run_fails():\n"
        f"    counter = Path({str(counter)!r})\n"
        "    runs = len(counter.read_text()) if counter.exists() else 0\n"
        "    counter.write_text('x' * (runs + 1))\n" + waits + "    assert runs > 0, 'fails on its first run only'\n"
    )


def started(gate: Path) -> Callable[[Event], None]:
    """A subscriber that writes gate once a candidate has started: the flake's rerun (flaky_test) ends
    only after that, so the run's events show whether candidates start before the rerun's end."""

    def heard(event: Event) -> None:
        if isinstance(event, CandidateEvent) and event.phase == Phase.starting:
            gate.touch()

    return heard


def milestones(events: list[Event]) -> list[type]:
    """The kinds of the run's milestone events, in the order published."""
    kinds = (BaselineStarted, BaselineFinished, IterationStarted, FanOutStarted, Merged, Escalated, RunFinished)
    return [type(e) for e in events if isinstance(e, kinds)]


def branches(repo: Path) -> list[str]:
    return sorted(git(repo, "branch", "--format=%(refname:short)").splitlines())


DOCS = {  # httpie's test_docs.py: a test per .rst file, its id holding the file's absolute path, skipped
    # without docutils (ids=str: pytest 9.2 writes a value over 100 characters as `name0`, httpie's pytest does not)
    "tests/test_docs.py": (
        "from pathlib import Path\n\nimport pytest\n\n\n"
        "@pytest.mark.skipif(True, reason='docutils not installed')\n"
        "@pytest.mark.parametrize('name', [str(Path(__file__).parent / 'README.rst')], ids=str)\n"
        "def test_rst_file_syntax(name):\n    pass\n"
    )
}


async def test_green_in_one_iteration_merges_the_winner_and_writes_the_state(tmp_path: Path) -> None:
    """Also: a test whose id holds the path of the tree it runs in has one id in every worktree
    (the baseline's, each candidate's, the user's checkout). Before, the fix's run in its own worktree
    counted the skipped test under its new id as a failure: 3/4 (75.0%), never green. And a flake
    beside the bug (issue 40.4): the baseline's rerun of it runs beside the first proposal, and the
    candidates, aimed at the bug too, start before the rerun ends (it waits for the first to start:
    `started`), are kept when it finds the flake, and are judged as it found it."""
    gate = tmp_path / "a-candidate-started"
    flake = flaky_test(tmp_path / "flaky-runs", gate)
    repo = make_repo(tmp_path / "repo", {**CALC, **DOCS, "tests/test_flaky.py": flake})
    start = git(repo, "rev-parse", "HEAD")
    actions = {"a": {"write": WRONG}, "b": {"write": TAMPER}, "c": {"write": FIX}}
    # test_timeout: the rerun's wait for a candidate's start must fit its per-test limit under CI load
    run, events = await repair(repo, agent(tmp_path, actions), started(gate), flaky_reruns=1, test_timeout=90)

    assert run.status == "succeeded" and run.finished and reports.EXIT_CODES[run.status] == 0
    assert run.stop_reason == "the quality gate is met (the whole suite is green)"
    assert run.baseline.passed == 1 and run.baseline.total == 3  # the flake left out once found (40.4)
    assert run.flaky == [FLAKY_ID] and next(e for e in events if isinstance(e, BaselineFinished)).flaky == ()
    found = f"flaky: {FLAKY_ID} failed in the baseline and passed rerun alone (rerun beside the first iteration)"
    note = next(i for i, e in enumerate(events) if isinstance(e, Note) and e.text == found)
    first = next(i for i, e in enumerate(events) if isinstance(e, CandidateEvent))
    assert [type(e) for e in events].index(FanOutStarted) < first < note  # candidates started before it ended
    summary = reports.summary(run, None)
    assert (summary.baseline.passed, summary.baseline.total) == (1, 3)
    assert (summary.final.passed, summary.final.total, summary.final.pass_rate) == (3, 3, 100.0)
    assert run.baseline_skipped == ["tests/test_docs.py::test_rst_file_syntax[<repo>/tests/README.rst]"]
    assert run.current.pass_rate == 100.0 and run.current_failing == []
    [record] = run.iterations
    assert record.winner == "c" and record.pass_rate == 100.0
    # explore's start and end are phases too (issue 40.6): booked on the first and the last iteration
    assert record.timing.start > 0 and record.timing.end > 0 and record.timing.total() <= run.duration_s
    assert [(c.id, c.status.value) for c in record.candidates] == [("a", "ok"), ("b", "rejected"), ("c", "ok")]
    assert record.candidates[1].reason == "edits test files: tests/test_calc.py"
    assert round(record.candidates[0].pass_rate, 1) == 33.3  # 1/3: the flake counted neither way, as found
    # merged: one commit on the start, holding the winner's change and nothing else; the user's
    # clean branch fast-forwarded to it
    assert run.merged_commit == record.commit == git(repo, "rev-parse", "HEAD")
    assert git(repo, "rev-list", f"{start}..HEAD").splitlines() == [record.commit]
    assert git(repo, "diff", "--name-only", start, "HEAD") == "calc.py"
    assert (repo / "calc.py").read_text() == FIX["calc.py"]
    assert "candidate c" in git(repo, "log", "-1", "--format=%s")
    # the state on disk is the run's
    saved = state.load(repo, run.run_id)
    assert saved.status == "succeeded" and saved.finished and saved.merged_commit == record.commit
    assert [r.winner for r in saved.iterations] == ["c"] and saved.worktrees == [] and saved.pids == []
    history = [json.loads(line) for line in (repo / ".explore" / "history.jsonl").read_text().splitlines()]
    assert [(h["run_id"], h["n"], h["green"]) for h in history] == [(run.run_id, 0, False), (run.run_id, 1, True)]
    # what the subscriber heard: the milestones in order, each candidate from its start to a result
    assert milestones(events) == [
        BaselineStarted,
        BaselineFinished,
        IterationStarted,
        FanOutStarted,
        Merged,
        RunFinished,
    ]
    merged = next(e for e in events if isinstance(e, Merged))
    assert (merged.candidate, merged.after, merged.commit) == ("c", 100.0, record.commit)
    for cid in "abc":
        phases = [e.phase for e in events if isinstance(e, CandidateEvent) and e.candidate == cid]
        assert phases[0] == Phase.starting and Phase.finished in phases, (cid, phases)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.status == "succeeded" and finished.state is run
    # no worktree, no candidate branch; with the result applied, the run keeps no visible branch
    assert_no_debris(repo)
    assert branches(repo) == ["main"]
    assert git(repo, "status", "--porcelain") == ""


async def test_escalates_when_every_candidate_fails_on_an_external_service(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    start = git(repo, "rev-parse", "HEAD")
    limited = {"fail": "HTTP 429 Too Many Requests: rate limit reached for this key"}
    run, events = await repair(repo, agent(tmp_path, {c: limited for c in "abc"}))

    assert run.status == "escalated" and reports.EXIT_CODES[run.status] == 3
    assert run.escalation is not None and run.escalation.category == EscalationCategory.external_service
    assert "rate-limiting" in run.escalation.reason and "(candidate a)" in run.escalation.reason
    assert any(f"explore resume {run.run_id}" in option for option in run.escalation.options)
    assert run.merged_commit is None and run.current_commit == start
    saved = state.load(repo, run.run_id)
    assert saved.status == "escalated" and saved.escalation == run.escalation
    assert milestones(events) == [
        BaselineStarted,
        BaselineFinished,
        IterationStarted,
        FanOutStarted,
        Escalated,
        RunFinished,
    ]
    assert [e.info for e in events if isinstance(e, Escalated)] == [run.escalation]
    # nothing merged, the user's branch untouched; the run's branch stays for `explore resume`
    assert git(repo, "rev-parse", "HEAD") == start and git(repo, "rev-parse", f"{run.branch}") == start
    assert_no_debris(repo)
    assert branches(repo) == sorted(["main", f"explore/{run.run_id}"])
    assert git(repo, "status", "--porcelain") == ""


async def test_no_candidate_better_fails_the_run_and_leaves_no_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    start = git(repo, "rev-parse", "HEAD")
    run, events = await repair(repo, agent(tmp_path, {c: {"write": WRONG} for c in "ab"}), max_iterations=1, parallel=2)

    assert run.status == "failed" and reports.EXIT_CODES[run.status] == 1
    assert run.stop_reason == "max iterations (1) spent"
    [record] = run.iterations
    assert record.winner is None and record.commit is None
    # the same wrong change twice: both scored, neither better than the baseline's third
    assert [(c.status.value, round(c.pass_rate, 1), c.agreement) for c in record.candidates] == [("ok", 33.3, 2)] * 2
    assert run.merged_commit is None and git(repo, "rev-parse", "HEAD") == start
    assert state.load(repo, run.run_id).status == "failed"
    assert Merged not in milestones(events) and milestones(events)[-1] is RunFinished
    assert_no_debris(repo)
    assert branches(repo) == ["main"] and run.branch is None


async def test_a_running_candidate_aimed_only_at_a_flake_the_rerun_finds_is_withdrawn(tmp_path: Path) -> None:
    """Issue 40.4: the baseline's last flaky rerun runs beside the first proposal and its fan-out; the
    flake it finds is left out, and a candidate aimed only at it, already started (the rerun waits
    for it: `started`), is withdrawn — never scored, its result saying why. (A flake beside a real
    bug, its candidates kept: test_green_in_one_iteration_merges_the_winner_and_writes_the_state; a
    test job killed: test_core_fanout.)"""
    gate = tmp_path / "a-candidate-started"
    files = {**CALC, **FIX, "tests/test_flaky.py": flaky_test(tmp_path / "flaky-runs", gate)}
    repo = make_repo(tmp_path / "repo", files)
    touch = {"calc.py": FIX["calc.py"] + "# checked\n"}
    actions = {"a": {"write": touch}}
    run, events = await repair(
        repo, agent(tmp_path, actions), started(gate), parallel=1, flaky_reruns=1, test_timeout=90
    )
    assert run.status == "succeeded" and run.flaky == [FLAKY_ID], run.stop_reason
    assert next(e for e in events if isinstance(e, BaselineFinished)).flaky == ()  # its rerun had not run
    found = f"flaky: {FLAKY_ID} failed in the baseline and passed rerun alone (rerun beside the first iteration)"
    note = next(i for i, e in enumerate(events) if isinstance(e, Note) and e.text == found)
    assert next(i for i, e in enumerate(events) if isinstance(e, CandidateEvent)) < note
    [record] = run.iterations
    [a] = record.candidates
    assert a.status.value == "rejected" and not a.tested and not a.validated and record.winner is None
    assert a.reason is not None and a.reason.startswith(f"withdrawn: aimed only at {FLAKY_ID}, found flaky")
    assert a.score == 0.0 and a.pass_rate == 0.0
    [said] = [e.result for e in events if isinstance(e, CandidateEvent) and e.phase == Phase.finished]
    assert said is not None and said.reason == a.reason
    assert run.merged_commit is None and run.current_failing == []
    assert_no_debris(repo)


async def test_a_baseline_over_its_limit_says_it_was_not_measured_and_why(tmp_path: Path) -> None:
    """Issue 39 point 8 (youtube-dl-17): the suite overran the baseline's limit; the last line and the
    report say the baseline was not measured and why, never `0/0 passed (0.0%)`."""
    stuck = {"tests/test_stuck.py": "import time\n\n\ndef test_stuck():\n    time.sleep(600)\n"}
    repo = make_repo(tmp_path / "repo", {**CALC, **stuck})
    run, events = await repair(repo, agent(tmp_path, {}), baseline_timeout=1)

    assert run.status == "escalated" and run.escalation is not None
    assert run.escalation.category == EscalationCategory.infrastructure and run.iterations == []
    line = reports.result_line(run)
    assert line.startswith("escalated: baseline not measured: the full test suite did not finish within 1s ("), line
    assert line.endswith(" — escalated (infrastructure)") and "0/0" not in line, line
    assert "- **Baseline:** baseline not measured: the full test suite did not finish" in reports.markdown(run)
    assert milestones(events) == [BaselineStarted, Escalated, RunFinished]
    assert_no_debris(repo)
