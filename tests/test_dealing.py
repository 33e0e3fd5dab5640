"""decide/dealing.py: how a fleet's candidates are dealt — the rotation, and Thompson sampling over
the iterations each slot took part in and won, which always keeps one candidate per slot."""

from __future__ import annotations

from explore.decide.dealing import Record, deal, slot_record
from explore.model.tally import AgentTally

SLOTS = ["idle", "fixer,mutate"]
HISTORY = [{"idle": AgentTally(candidates=2), "fixer": AgentTally(candidates=1, wins=1)} for _ in range(4)]
"""Four iterations: idle made two candidates in each and never won, fixer one and won every time."""


def test_even_and_no_history_are_the_rotation() -> None:
    assert deal(3, SLOTS, HISTORY, "even", "r/1").slots == [0, 1, 0]
    fresh = deal(5, SLOTS, [], "auto", "r/1")
    assert fresh.slots == [0, 1, 0, 1, 0] and "no iteration of these agents" in fresh.how


def test_auto_deals_more_to_the_slot_that_wins_here_and_keeps_one_for_every_slot() -> None:
    dealt = [deal(4, SLOTS, HISTORY, "auto", f"run-{i}/1").slots for i in range(200)]
    assert all(d.count(0) >= 1 and d.count(1) >= 1 and len(d) == 4 for d in dealt)
    assert sum(d.count(1) for d in dealt) > 0.9 * 3 * 200  # the winner gets nearly every extra candidate
    said = deal(4, SLOTS, HISTORY, "auto", "run-0/1").how
    assert "Thompson sampling over the iterations each slot took part in" in said
    assert "idle 1 (won 0 of 4 iterations)" in said and "fixer,mutate 3 (won 4 of 4 iterations)" in said


def test_an_agent_dealt_more_candidates_is_not_rated_lower_for_it() -> None:
    """The winner of every iteration made 3 of its 4 candidates; the other made 1 and never won. Per
    candidate it stood at 1/3 won, below an agent never tried here (1/2 before any evidence); per iteration
    it is 4 of 4, and it gets most of the extra candidates."""
    history = [{"wide": AgentTally(candidates=3, wins=1), "never": AgentTally(candidates=1)} for _ in range(4)]
    assert slot_record("wide", history) == Record(iterations=4, won=4)
    assert slot_record("never", history) == Record(iterations=4, won=0)
    dealt = [deal(5, ["never", "fresh", "wide"], history, "auto", f"run-{i}/1").slots for i in range(200)]
    assert all(d.count(0) >= 1 and d.count(1) >= 1 for d in dealt)  # every slot keeps its one candidate
    assert sum(d.count(2) - 1 for d in dealt) > 0.75 * 2 * 200  # per candidate (Beta(5, 9)) it got 34% of the extras


def test_the_same_run_and_iteration_deal_alike_and_a_chain_counts_its_members() -> None:
    assert deal(6, SLOTS, HISTORY, "auto", "x/2").slots == deal(6, SLOTS, HISTORY, "auto", "x/2").slots
    chained = [*HISTORY, {"mutate": AgentTally(candidates=2, wins=1)}, {"mutate": AgentTally(candidates=1)}]
    assert slot_record("fixer,mutate", chained) == Record(iterations=6, won=5)  # an iteration counted once
    assert slot_record("absent", chained) == Record()
    assert deal(1, SLOTS, HISTORY, "auto", "x/1").slots in ([0], [1])  # fewer candidates than slots
