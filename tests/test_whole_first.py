"""Issue 27.1/5: when the whole suite is cheap, a candidate's first test job is the whole suite, and
that run is its validation and final confirmation: the suite runs once per candidate, not twice.
The decision (decide/first_run), the turns the whole-suite runs take (fanout/turns), and the
fan-out that uses them on real worktrees and real pytest processes."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import git, write_files
from explore.decide import first_run
from explore.decide.affected import ImportMap
from explore.decide.scoring import Ranked
from explore.edges import attribution, guard
from explore.fanout.scheduler import FanOutResult
from explore.fanout.turns import Turns
from explore.generators.base import CandidateContext
from explore.model.candidates import CandidatePlan, CandidateStatus, Realised
from explore.model.events import CandidateEvent, Phase, describe
from test_core_fanout import FIX, WRONG, FixedChanges, Iteration, assert_cleaned_up, fan, hang, iteration

pytestmark = pytest.mark.anyio


def test_a_start_up_bound_suite_runs_whole_first() -> None:
    """humanize's figures: 0.7 s of start-up, 0.5 s of tests of which the affected file holds 0.2 s;
    3 candidates on 2 slots."""
    assert first_run.whole_is_cheap(0.5, 0.2, 0.7, candidates=3, slots=2)
    assert first_run.whole_is_cheap(0.0, 0.0, 0.3, candidates=1, slots=1)  # nothing timed yet: start-up only


def test_a_suite_whose_affected_share_is_small_runs_affected_first() -> None:
    """20 s of tests, 1 s affected: the whole suite for every candidate would cost 7x the affected
    runs when no candidate wins."""
    assert not first_run.whole_is_cheap(20.0, 1.0, 1.0, candidates=3, slots=2)
    # the worst case bound: whole (1 + 3) against twice affected (2 × (1 + 1))
    assert first_run.whole_is_cheap(3.0, 1.0, 1.0, candidates=1, slots=2)
    assert not first_run.whole_is_cheap(3.2, 1.0, 1.0, candidates=1, slots=2)


def test_many_rounds_of_candidates_tip_it_to_affected_first() -> None:
    """Within the worst-case bound, but 8 candidates on 1 slot pay the difference 8 times over while
    a whole-first winner saves one validation."""
    assert first_run.whole_is_cheap(1.6, 0.4, 1.0, candidates=1, slots=1)
    assert not first_run.whole_is_cheap(1.6, 0.4, 1.0, candidates=8, slots=1)


def test_selected_seconds_count_the_selected_files_and_ids() -> None:
    durations = {"t/a.py::x": 0.5, "t/a.py::y": 0.25, "t/b.py::z": 1.0, "t/c.py::w": 2.0}
    assert first_run.selected_seconds(["t/a.py", "t/c.py::w"], durations) == 2.75
    assert first_run.selected_seconds(["t/gone.py"], durations) == 0.0


def prospect(cid: str, confidence: float, pass_rate: float = 100.0) -> Ranked:
    """A candidate as it ranks with that pass rate, no newly failing test, a two-line diff."""
    return Ranked(cid, pass_rate, 0, 1, confidence, 2)


async def test_turns_go_to_the_best_prospect_and_stop_at_what_cannot_be_outranked() -> None:
    turns = Turns(slots=1)
    got: dict[str, bool] = {}

    async def wait_for(cid: str, confidence: float) -> None:
        got[cid] = await turns.take(prospect(cid, confidence))

    assert await turns.take(prospect("c", 0.2))  # the first to ask, while nobody else waits
    async with anyio.create_task_group() as group:
        for cid, confidence in (("d", 0.1), ("b", 0.5), ("a", 0.9)):  # they ask in this order
            group.start_soon(wait_for, cid, confidence)
        await anyio.wait_all_tasks_blocked()
        assert got == {} and sorted(turns.waiting) == ["a", "b", "d"]
        turns.give_back("c", prospect("c", 0.2, pass_rate=75.0))  # c's whole suite: 75 %, validated
        await anyio.wait_all_tasks_blocked()
        assert got == {"a": True} and turns.best == prospect("c", 0.2, 75.0)  # a, the best prospect, goes next
        turns.give_back("a", prospect("a", 0.9))  # a passes every test: b and d could not outrank it
    assert got == {"a": True, "b": False, "d": False} and not turns.running and not turns.waiting


async def test_a_perfect_score_does_not_stop_a_better_prospect() -> None:
    """b (confidence 0.3) got its turn first and passes every test; a (0.99) would outrank it at
    100 %: a still runs, as validation would have validated a first."""
    turns = Turns(slots=1)
    assert await turns.take(prospect("b", 0.3))
    turns.give_back("b", prospect("b", 0.3))
    assert await turns.take(prospect("a", 0.99))
    turns.give_back("a", prospect("a", 0.99))
    assert turns.best == prospect("a", 0.99) and not await turns.take(prospect("c", 0.5))


async def test_the_first_run_goes_alone_then_the_free_slots_fill() -> None:
    turns = Turns(slots=2)
    got: dict[str, bool] = {}

    async def wait_for(cid: str) -> None:
        got[cid] = await turns.take(prospect(cid, 0.5))

    assert await turns.take(prospect("a", 0.9))
    async with anyio.create_task_group() as group:
        for cid in ("b", "c"):
            group.start_soon(wait_for, cid)
        await anyio.wait_all_tasks_blocked()
        assert got == {} and turns.running == {"a"}  # a slot is free, but the first run goes alone
        turns.give_back("a", prospect("a", 0.9, pass_rate=75.0))  # not every test passed: two at a time
    assert got == {"b": True, "c": True} and turns.running == {"b", "c"}


async def test_waiting_for_a_turn_is_not_counted_against_the_branch_timeout() -> None:
    """b waits behind a's whole suite for longer than b's whole --branch-timeout: its turn still
    comes, and its limit then runs on from where it stopped (it used to fire during the wait: b was
    a 'timeout' that never ran a test)."""
    turns = Turns(slots=1)
    limit, got = 0.2, []
    assert await turns.take(prospect("a", 0.9))

    async def b() -> None:
        with anyio.fail_after(limit) as scope:
            got.append(await turns.take(prospect("b", 0.5), scope))
            assert scope.deadline != math.inf  # restored, and moved on by the wait
            await anyio.lowlevel.checkpoint()
            got.append(not scope.cancel_called)

    async with anyio.create_task_group() as group:
        group.start_soon(b)
        await anyio.wait_all_tasks_blocked()
        assert list(turns.waiting) == ["b"]
        await anyio.sleep(2 * limit)  # a's whole suite: longer than b's whole limit (what is tested)
        turns.give_back("a", None)  # a failed: b still has its chance
    assert got == [True, True]


async def test_a_candidate_that_must_wait_for_its_turn_says_behind_whom_once() -> None:
    """b's turn does not come at once (a's whole suite runs alone): it is told once, with a, so the
    live view and the log show it waiting instead of nothing; a, whose turn came at once, is not."""
    turns = Turns(slots=1)
    told: dict[str, list[list[str]]] = {"a": [], "b": []}
    assert await turns.take(prospect("a", 0.9), waits=told["a"].append)

    async with anyio.create_task_group() as group:
        group.start_soon(turns.take, prospect("b", 0.5), None, told["b"].append)
        await anyio.wait_all_tasks_blocked()
        assert told == {"a": [], "b": [["a"]]} and list(turns.waiting) == ["b"]
        turns.give_back("a", None)
    assert told == {"a": [], "b": [["a"]]} and turns.running == {"b"}
    waiting = describe(CandidateEvent("b", Phase.turn, "a"))
    assert waiting == "waiting for its turn: the whole suite runs first for a"


async def test_a_withdrawn_result_outranks_nobody() -> None:
    """b (75 %) then a (100 %) validated in their turns; a is rejected afterwards: b is the best;
    withdrawing one that gave back no result changes nothing."""
    turns = Turns(slots=1)
    for cid, confidence, rate in (("b", 0.5, 75.0), ("a", 0.9, 100.0)):
        assert await turns.take(prospect(cid, confidence))
        turns.give_back(cid, prospect(cid, confidence, rate))
    assert turns.best == prospect("a", 0.9) and not await turns.take(prospect("c", 0.5))
    turns.withdraw("c")
    turns.withdraw("a")
    assert turns.best == prospect("b", 0.5, 75.0)
    assert await turns.take(prospect("c", 0.5))


async def test_a_prospect_stops_the_whole_runs_it_outranks_and_holds_the_waiting_ones() -> None:
    """Issue 40.1: b (0.5) runs its whole suite first in its turn, d (0.9) too, c (0.4) waits; a
    (0.6), whose affected tests all pass, starts its whole run: b's is stopped (b cannot outrank a
    even passing every test), d's goes on (it could), c waits for a's result. a validates at 100 %:
    c is refused. Fails without: b's run went on beside a's, and c took the slot b gave back."""
    turns = Turns(slots=2)
    stopped: dict[str, bool] = {}
    got: dict[str, bool] = {}

    async def runs(cid: str, confidence: float) -> None:
        assert await turns.take(prospect(cid, confidence))
        with turns.stoppable(cid) as scope:
            if cid == "b":  # b's whole suite: long (d's is over at once)
                await anyio.sleep_forever()
        stopped[cid] = scope.cancelled_caught
        turns.give_back(cid, None)

    async def waits(cid: str, confidence: float) -> None:
        got[cid] = await turns.take(prospect(cid, confidence))

    async with anyio.create_task_group() as group:
        group.start_soon(runs, "b", 0.5)
        await anyio.wait_all_tasks_blocked()
        turns.ended = 1  # b's is no longer the first run: it need not go alone
        group.start_soon(runs, "d", 0.9)
        await anyio.wait_all_tasks_blocked()
        assert turns.running == {"b"} and stopped == {"d": False}  # d's run is over; b's goes on
        assert turns.prospect_starts(prospect("a", 0.6)) == ["b"]
        group.start_soon(waits, "c", 0.4)
        await anyio.wait_all_tasks_blocked()
        assert stopped == {"d": False, "b": True} and list(turns.stopped) == ["b"]
        assert turns.stopped["b"].startswith("candidate a outranks it even if it passed every test")
        assert got == {} and list(turns.waiting) == ["c"]  # a slot is free: c waits for a's result
        turns.prospect_ends(prospect("a", 0.6))
    assert got == {"c": False} and turns.best == prospect("a", 0.6)


async def test_a_prospect_whose_whole_run_fails_lets_the_held_ones_run() -> None:
    turns = Turns(slots=1)
    turns.ended = 1
    turns.prospect_starts(prospect("a", 0.9))
    got: list[bool] = []

    async def waits() -> None:
        got.append(await turns.take(prospect("b", 0.5)))

    async with anyio.create_task_group() as group:
        group.start_soon(waits)
        await anyio.wait_all_tasks_blocked()
        assert got == [] and turns.prospect is not None
        turns.prospect_ends(None)  # a's whole run failed a test: b's may still win
    assert got == [True] and turns.best is None


async def test_a_failed_run_gives_its_turn_back_without_a_result() -> None:
    turns = Turns(slots=1)
    assert await turns.take(prospect("a", 0.9))
    turns.give_back("a", None)
    assert not turns.scored and turns.best is None and await turns.take(prospect("b", 0.5))


@pytest.mark.parametrize("shards", [None, 2])
async def test_a_cheap_suite_runs_once_per_candidate_and_the_others_wait_for_their_turn(
    tmp_path: Path, shards: int | None
) -> None:
    """Three fixes on one slot: the whole suite is each candidate's first test job, one at a time;
    once a's has passed every test the ones still waiting are not run (equal but for their ids,
    they cannot outrank a). No affected run, no validation run: the winner's one run is its
    validation and its confirmation. With --shards 2 alike (issue 40.2: on networkx, --shards 2
    made the floor run its affected tests, nearly the whole suite, then the whole suite)."""
    fixes = [
        FIX,
        {"calc.py": "def add(a, b):\n    return b + a\n"},
        {"calc.py": "def add(a, b):\n    return a + b + 0\n"},
    ]
    it = cued(tmp_path, FixedChanges(list(fixes)))
    it.config = replace(it.config, shards=shards)
    outcome = await fan(it)

    tested = [c for c in outcome.candidates if c.validated]
    untested = [c for c in outcome.candidates if not c.validated]
    # equal but for their ids, a ranks first: whoever ran first, a ran, and one or both others did not
    assert outcome.ranking[0] == "a" and len(untested) >= 1 and len(tested) + len(untested) == 3, outcome.candidates
    for c in tested:
        assert c.pass_rate == 100.0 and c.tested and c.progress == "full 3/3", c
    assert outcome.confirmation_s == 0.0  # the winner's run was its confirmation
    for c in untested:
        assert c.status == CandidateStatus.ok and c.progress and c.progress.startswith("not tested"), c
        assert c.reason == c.progress and not c.tested and c.id not in outcome.runs  # the report's "why not"
        turn = [(e.phase, e.detail) for e in it.events if e.candidate == c.id]
        # refused against the validated best when it asked (a, or b if b ran first), as its reason says
        assert (Phase.not_tested, c.reason.removeprefix("not tested: ")) in turn, turn
        assert Phase.not_needed not in [phase for phase, _ in turn]  # nothing ran: no "full suite not needed"
    logs = sorted(p.relative_to(it.config.iteration_dir).as_posix() for p in it.config.iteration_dir.glob("*/*.log"))
    assert logs == [f"candidate-{c.id}/tests.log" for c in tested], logs  # once, whole, per candidate run
    assert_cleaned_up(it)


async def test_twins_that_come_later_reopen_an_untested_candidate_they_make_outrank_the_winner(
    tmp_path: Path,
) -> None:
    """a (confidence 0.9) passes every test first; b (0.5) asks for its turn next and is not tested:
    at agreement 1 it cannot outrank a. Then c and d bring b's very patch: at 100 % with agreement
    3, b outranks a (DESIGN §1: agreement before confidence), so validation tests it after all and it
    wins, as affected-first would have had it. It used to stay untested, a merged."""
    x = {"calc.py": "def add(a, b):\n    return b + a\n"}
    after = [None, ("a", Phase.finished), ("b", Phase.finished), ("b", Phase.finished)]
    generator = Cued([x, FIX, FIX, FIX], after, [0.9, 0.5, 0.5, 0.5])
    it = cued(tmp_path, generator)
    outcome = await fan(it)

    by_id = {c.id: c for c in outcome.candidates}
    assert by_id["b"].agreement == 3 and by_id["b"].tested and by_id["b"].validated, reasons(outcome)
    assert by_id["b"].pass_rate == 100.0 and by_id["a"].pass_rate == 100.0, outcome.candidates
    assert (
        b_turn := [e.phase for e in it.events if e.candidate == "b"]
    ) and Phase.not_tested in b_turn  # skipped first
    assert by_id["b"].progress == "full 3/3" and by_id["b"].reason is None, by_id["b"]  # no "not tested" left
    assert outcome.ranking[0] in ("b", "c", "d") and "a" in outcome.ranking, outcome.ranking
    assert all(by_id[t].tested and by_id[t].reason is None for t in "cd"), outcome.candidates
    assert_cleaned_up(it)


def reasons(outcome: FanOutResult) -> dict[str, tuple[str, str | None]]:
    """Each candidate's status and reason: what a failing assertion shows first (a candidate's whole
    repr was cut before its reason in the CI log)."""
    return {c.id: (c.status.value, c.reason) for c in outcome.candidates}


class Cued(FixedChanges):
    """FixedChanges whose candidates finish generating on cue: each waits for another candidate's
    event of a phase (None: at once), and reports its own confidence."""

    def __init__(
        self, changes: list[dict[str, str]], cues: list[tuple[str, Phase] | None], confidences: list[float]
    ) -> None:
        super().__init__(list(changes))
        self.cues, self.confidences = cues, confidences
        self.seen: dict[tuple[str, Phase], anyio.Event] = {cue: anyio.Event() for cue in cues if cue is not None}

    def listen(self, event: CandidateEvent) -> None:
        if (cue := (event.candidate, event.phase)) in self.seen:
            self.seen[cue].set()

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        index = plan.data["index"]
        if (cue := self.cues[index]) is not None:
            await self.seen[cue].wait()
        realised = await super().realise(plan, context)
        realised.confidence = self.confidences[index]
        return realised


def cued(tmp_path: Path, generator: FixedChanges, branch_timeout: float = 60.0) -> Iteration:
    """The fan-out of generator's candidates on one slot, the whole suite first, its events kept
    (and heard by a Cued generator: its cues)."""
    it = iteration(tmp_path, generator, branch_timeout)

    def listen(event: CandidateEvent) -> None:
        it.events.append(event)
        if isinstance(generator, Cued):
            generator.listen(event)

    it.config = replace(
        it.config,
        executor=it.config.executor.__class__(pool=it.pool, tracker=it.tracker, parallel=1),
        progressive=True,
        import_map=ImportMap.build(it.repo, {"tests/test_calc.py"}),
        durations={i: 0.001 for i in it.config.yardstick.ids},
        whole_first_allowed=True,
        listener=listen,
    )
    return it


async def test_a_twin_waiting_for_its_originals_turn_does_not_time_out_on_that_wait(tmp_path: Path) -> None:
    """a (confidence 0.9) takes the first turn and its tests hang until its --branch-timeout kills
    them; b, the fix, waits for its turn meanwhile (off its clock), and c — b's very patch — waits
    for b's tests. c's wait (a's whole limit, then b's run) is longer than c's own limit, but none
    of it is c's time: c shares b's result. It used to be a 'timeout … its process tree was killed'
    with nothing of its own running."""
    limit = 15.0  # a whole pytest run of b and its generation fit in it at CI load (6 s did not at load 16)
    generator = Cued(
        [hang(tmp_path / "hang.pid"), FIX, FIX], [None, ("a", Phase.full), ("b", Phase.turn)], [0.9, 0.5, 0.5]
    )
    it = cued(tmp_path, generator, branch_timeout=limit)
    outcome = await fan(it)

    by_id = {c.id: c for c in outcome.candidates}
    assert by_id["a"].status == CandidateStatus.timeout, reasons(outcome)  # its own tests hung: a true timeout
    assert [e.detail for e in it.events if e.candidate == "b" and e.phase == Phase.turn] == ["a"]
    assert by_id["b"].status == CandidateStatus.ok and by_id["b"].pass_rate == 100.0, by_id["b"]
    c = by_id["c"]
    assert c.status == CandidateStatus.ok and c.validated and c.pass_rate == 100.0, c
    assert c.duration_s > limit and c.progress == "same normalised patch as candidate b", c
    assert outcome.ranking[:1] == ["b"] and sorted(outcome.ranking) == ["b", "c"], outcome.ranking
    assert_cleaned_up(it)


class WritesOutside(Cued):
    """Cued, whose first candidate also writes a file into the user's working tree (the guarded
    repository) while it generates: the watch rejects it once its tests are over."""

    def __init__(self, repo: Path, *args: Any) -> None:
        super().__init__(*args)
        self.repo = repo

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        if plan.data["index"] == 0:
            (self.repo / "stray.txt").write_text("written outside its worktree\n", encoding="utf-8")
        return await super().realise(plan, context)


async def watched(tmp_path: Path, generator: WritesOutside) -> Iteration:
    """cued's fan-out with the watch on the user's tree (and git dir) that run/loop starts."""
    it = cued(tmp_path, generator)
    guarded = guard.Guard(it.repo, it.repo / ".git", it.repo / ".git", tmp_path / "quarantine")
    it.config = replace(it.config, watch=await attribution.Watch.start(guarded, "iteration-1"))
    return it


async def test_a_winner_rejected_after_its_turn_no_longer_outranks_the_candidates_after_it(tmp_path: Path) -> None:
    """a writes into the user's tree while b runs beside it: the watch cannot tell which of them
    did, so each runs again alone. a's replay passes every test in its whole-suite turn, then the
    watch rejects it; b's replay, after it, takes its own turn: a outranks nobody any more. b used
    to be refused its turn against a ('not tested: candidate a outranks it'), then ran its suite
    only in validation, after the fan-out."""
    x = {"calc.py": "def add(a, b):\n    return b + a\n"}
    generator = WritesOutside(tmp_path / "repo", [FIX, x], [None, ("a", Phase.finished)], [0.9, 0.5])
    it = await watched(tmp_path, generator)
    outcome = await fan(it)

    by_id = {c.id: c for c in outcome.candidates}
    assert by_id["a"].status == CandidateStatus.rejected and "stray.txt" in (by_id["a"].reason or ""), by_id["a"]
    b = by_id["b"]
    assert b.status == CandidateStatus.ok and b.tested and b.validated and b.pass_rate == 100.0, b
    assert [e.phase for e in it.events if e.candidate == "b"][-2:] == [Phase.full, Phase.finished], [
        (e.candidate, e.phase.value, e.detail) for e in it.events
    ]
    assert b.progress == "full 3/3" and b.reason is None and outcome.ranking == ["b"], b
    assert not (it.repo / "stray.txt").exists()
    assert_cleaned_up(it)


class ReplaysWorse(WritesOutside):
    """WritesOutside whose third candidate writes WRONG instead of its change when it runs again."""

    def __init__(self, repo: Path, *args: Any) -> None:
        super().__init__(repo, *args)
        self.realised: dict[int, int] = {}

    async def realise(self, plan: CandidatePlan, context: CandidateContext) -> Realised:
        index = plan.data["index"]
        self.realised[index] = self.realised.get(index, 0) + 1
        if index == 2 and self.realised[index] > 1:
            self.changes[2] = WRONG
        return await super().realise(plan, context)


async def test_a_replay_is_not_refused_against_a_first_run_the_watch_discarded(tmp_path: Path) -> None:
    """a (2 of 3 tests, confidence 0.9) writes into the user's tree while b (the fix, 0.5) and c
    (another fix, 0.7) run beside it, each passing its whole-suite turn: the watch cannot tell which
    of them wrote, so all three run again alone, and none of their first runs counts. a's replay
    is rejected; b's replay takes its own turn — it used to be refused against c's discarded first
    run ('not tested: candidate c outranks it', c not replayed yet) and ran only in validation
    after the fan-out; c's replay (WRONG this time) passes 1 test of 3."""
    partial = {"calc.py": "def add(a, b):\n    return abs(a) + b\n"}
    x = {"calc.py": "def add(a, b):\n    return b + a\n"}
    generator = ReplaysWorse(
        tmp_path / "repo", [partial, FIX, x], [None, ("a", Phase.full), ("b", Phase.full)], [0.9, 0.5, 0.7]
    )
    it = await watched(tmp_path, generator)
    outcome = await fan(it)

    events = [(e.candidate, e.phase, e.detail) for e in it.events]
    assert generator.realised == {0: 2, 1: 2, 2: 2}, events  # all three ran again
    b_events = [(phase, detail) for cid, phase, detail in events if cid == "b"]
    assert Phase.not_tested not in [phase for phase, _ in b_events] and Phase.validating not in [
        phase for phase, _ in b_events
    ], events  # b's replay took its turn: nothing refused it, no validation run after the fan-out
    by_id = {c.id: c for c in outcome.candidates}
    assert by_id["a"].status == CandidateStatus.rejected and "stray.txt" in (by_id["a"].reason or ""), by_id["a"]
    b, c = by_id["b"], by_id["c"]
    assert b.status == CandidateStatus.ok and b.tested and b.validated and b.pass_rate == 100.0, b
    assert b.progress == "full 3/3" and b.reason is None, b
    # c's replay fails two tests it does not fix: it passes 1 of 3, or, when its failures are read
    # while it still runs, its run is stopped (b, validated, outranks what it can still score)
    stopped = not c.tested and "its whole run was stopped: 2 failing tests it does not fix" in (c.reason or "")
    assert c.status == CandidateStatus.ok and (round(c.pass_rate, 1) == 33.3 or stopped), c
    assert outcome.ranking[0] == "b", outcome.ranking
    assert not (it.repo / "stray.txt").exists()
    assert_cleaned_up(it)


def test_the_best_prospect_alone_may_run_the_whole_suite_where_every_candidate_may_not() -> None:
    """dateutil's figures (quiet): 1 s of start-up, 4.2 s of tests, 0.3 s affected, 3 candidates on
    2 slots: the whole suite for every candidate is too dear (5.2 > 2 × 1.3), for the best prospect
    alone it is worth it (it loses 3.9 s when it does not win, saves 1.95 s when it does); never on
    a 20-minute suite with 10 s of affected tests."""
    assert not first_run.whole_is_cheap(4.2, 0.3, 1.0, candidates=3, slots=2)
    assert first_run.best_is_worth_whole(4.2, 0.3, 1.0, candidates=3, slots=2)
    assert not first_run.best_is_worth_whole(1200.0, 10.0, 2.0, candidates=3, slots=2)
    assert not first_run.best_is_worth_whole(5.0, 0.1, 0.3, candidates=1, slots=2)  # loses 5 s to save 0.4


def best_first(tmp_path: Path, generator: Cued) -> Iteration:
    """cued's fan-out on one slot, with a (missing) test file of 5 s beside test_calc.py: too dear
    for every candidate to run the whole suite first (6 s against 1 s affected), worth it for the
    best prospect (it risks 5 s against 3 × 3 s of affected runs)."""
    it = cued(tmp_path, generator)
    durations = {**it.config.durations, "tests/test_slow.py::test_slow": 5.0}
    it.config = replace(it.config, durations=durations, overhead_s=1.0)
    return it


async def test_the_best_prospect_runs_the_whole_suite_alone_and_its_win_spares_the_others(tmp_path: Path) -> None:
    """a asks first and runs the whole suite alone; it passes every test, so b and c (cued to
    realise once a has finished) cannot outrank it and run nothing. One test run in all: a's, which
    is its validation and its confirmation (affected-first ran a's affected tests, b's and c's, then
    a's whole suite)."""
    fixes = [
        FIX,
        {"calc.py": "def add(a, b):\n    return b + a\n"},
        {"calc.py": "def add(a, b):\n    return a + b + 0\n"},
    ]
    generator = Cued(fixes, [None, ("a", Phase.finished), ("a", Phase.finished)], [0.9, 0.5, 0.5])
    it = best_first(tmp_path, generator)
    outcome = await fan(it)

    by_id = {c.id: c for c in outcome.candidates}
    assert outcome.ranking == ["a"] and by_id["a"].progress == "full 3/3", outcome.candidates
    assert all(not by_id[c].tested and by_id[c].progress.startswith("not tested") for c in "bc"), outcome.candidates
    assert outcome.confirmation_s == 0.0
    logs = sorted(p.relative_to(it.config.iteration_dir).as_posix() for p in it.config.iteration_dir.glob("*/*.log"))
    assert logs == ["candidate-a/tests.log"], logs
    assert_cleaned_up(it)


async def test_when_the_best_prospect_does_not_win_the_others_run_their_affected_tests(tmp_path: Path) -> None:
    """a, the best prospect, runs the whole suite alone and fixes nothing; b (realised once a has
    finished) is not outranked by it, and runs its affected tests, then its whole suite in
    validation: only one whole run is at risk, never one per candidate."""
    fixes = [{"calc.py": "def add(a, b):\n    return a * b\n"}, FIX]
    generator = Cued(fixes, [None, ("a", Phase.finished)], [0.9, 0.5])
    it = best_first(tmp_path, generator)
    outcome = await fan(it)

    by_id = {c.id: c for c in outcome.candidates}
    assert outcome.ranking[0] == "b" and by_id["b"].progress == "affected 3/3 → full 3/3", outcome.candidates
    assert by_id["a"].validated and by_id["a"].progress.startswith("full "), by_id["a"]
    logs = sorted(p.relative_to(it.config.iteration_dir).as_posix() for p in it.config.iteration_dir.glob("*/*.log"))
    assert logs == ["candidate-a/tests.log", "candidate-b/affected.log", "candidate-b/tests.log"], logs
    assert_cleaned_up(it)


def test_of_equals_the_first_is_no_better_a_bet() -> None:
    """Issue 40.1: the best prospect runs the whole suite first only when it stands above the
    others; of three equals it wins one time in three, and dateutil's figures no longer pay."""
    assert first_run.first_wins([0.9, 0.5, 0.5]) == first_run.FIRST_WINS
    assert first_run.first_wins([0.5, 0.5, 0.5]) == pytest.approx(1 / 3)
    assert first_run.first_wins([]) == first_run.FIRST_WINS
    assert not first_run.best_is_worth_whole(4.2, 0.3, 1.0, candidates=3, slots=2, wins=1 / 3)


async def test_of_equals_nobody_runs_the_whole_suite_first_and_the_prospect_runs_it_at_once(tmp_path: Path) -> None:
    """Issue 40.1, progressive's case: three candidates of the same confidence, a suite too dear for
    every first run (best_first's 5 s): nobody runs it first. a's affected tests all pass, which
    makes it the best prospect: its whole run starts at once — before c (cued to realise once a has
    finished) runs anything — instead of after every candidate's first run, and it is a's
    validation and confirmation. c improves too, but cannot beat a: affected tests only."""
    partial = {"calc.py": "def add(a, b):\n    return abs(a) + b\n"}  # test_negative still fails
    generator = Cued([FIX, WRONG, partial], [None, None, ("a", Phase.finished)], [0.5, 0.5, 0.5])
    it = best_first(tmp_path, generator)
    outcome = await fan(it)

    order = [(e.candidate, e.phase) for e in it.events]
    assert ("a", Phase.turn) not in order and ("b", Phase.full) not in order and ("a", Phase.full) not in order
    assert order.index(("a", Phase.validating)) < order.index(("c", Phase.affected)), order
    by_id = {c.id: c for c in outcome.candidates}
    assert outcome.ranking[0] == "a" and by_id["a"].progress == "affected 3/3 → full 3/3", outcome.candidates
    assert outcome.confirmation_s == 0.0
    logs = sorted(p.relative_to(it.config.iteration_dir).as_posix() for p in it.config.iteration_dir.glob("*/*.log"))
    assert logs == [
        "candidate-a/affected.log",
        "candidate-a/tests.log",
        "candidate-b/affected.log",
        "candidate-c/affected.log",
    ], logs
    assert_cleaned_up(it)


async def test_a_prospect_stops_a_losers_whole_run_instead_of_waiting_for_it(tmp_path: Path) -> None:
    """Issue 40.1 on real worktrees and pytest processes, two slots: b (confidence 0.9) changes
    slow.py, which only tests/test_slow.py imports, a 5 s file: its affected tests cost its whole
    suite, which it runs first in its turn — its change does not fix calc.py (test_calc's two
    failures fail again) and makes test_slow hang. a (0.5, realised once b's run has started)
    fixes calc.py, whose affected tests are cheap: they all pass, a is the best prospect and its
    whole run starts. Passing every test, b would outrank a (its rank is not what stops it, as
    test_a_prospect_stops_the_whole_runs_it_outranks… has it for a lower one); the two failures it
    does not fix are: its run is stopped, b is "not tested" and says why, a wins. Fails without:
    b's run went on until its --branch-timeout (b a `timeout`, the fan-out as long as that)."""
    hangs = {"slow.py": "import time\n\n\ndef value():\n    time.sleep(3600)\n    return 1\n"}
    it = cued(tmp_path, Cued([FIX, hangs], [("b", Phase.full), None], [0.5, 0.9]))
    slow = {
        "slow.py": "def value():\n    return 1\n",
        "tests/test_slow.py": "import slow\n\n\ndef test_slow():\n    assert slow.value() == 1\n",
    }
    write_files(it.repo, slow)
    git(it.repo, "add", "-A")
    git(it.repo, "commit", "-q", "-m", "slow")
    head, ids = git(it.repo, "rev-parse", "HEAD"), {"tests/test_slow.py::test_slow"}
    it.config = replace(
        it.config,
        commit=head,
        request=replace(it.config.request, current_commit=head, base_commit=head),
        executor=it.config.executor.__class__(pool=it.pool, tracker=it.tracker, parallel=2),
        yardstick=replace(it.config.yardstick, ids=it.config.yardstick.ids | ids),
        current_passing=it.config.current_passing | ids,
        import_map=ImportMap.build(it.repo, {"tests/test_calc.py", "tests/test_slow.py"}),
        durations={**it.config.durations, "tests/test_slow.py::test_slow": 5.0},
        overhead_s=1.0,
        branch_timeout=30.0,
    )
    outcome = await fan(it)

    by_id = {c.id: c for c in outcome.candidates}
    a, b = by_id["a"], by_id["b"]
    assert outcome.ranking == ["a"] and a.progress == "affected 3/3 → full 4/4", outcome.candidates
    assert b.status == CandidateStatus.ok and not b.tested and not b.validated, b
    why = "candidate a outranks it (its whole run was stopped: 2 failing tests it does not fix)"
    assert b.reason == f"not tested: {why}" and (Phase.not_tested, why) in [
        (e.phase, e.detail) for e in it.events if e.candidate == "b"
    ]
    assert_cleaned_up(it)
