"""decide/dealing.py: how a fleet's candidates are dealt — the rotation, and Thompson sampling over
this repository's history that always keeps one candidate per slot."""

from __future__ import annotations

from explore.decide.dealing import deal, history_tallies, slot_record
from explore.model.tally import AgentTally

SLOTS = ["idle", "fixer,mutate"]
HISTORY = {"idle": AgentTally(candidates=8, wins=0), "fixer": AgentTally(candidates=4, wins=4)}


def test_even_and_no_history_are_the_rotation() -> None:
    assert deal(3, SLOTS, HISTORY, "even", "r/1").slots == [0, 1, 0]
    fresh = deal(5, SLOTS, {}, "auto", "r/1")
    assert fresh.slots == [0, 1, 0, 1, 0] and "no candidate of these agents" in fresh.how


def test_auto_deals_more_to_the_slot_that_wins_here_and_keeps_one_for_every_slot() -> None:
    dealt = [deal(4, SLOTS, HISTORY, "auto", f"run-{i}/1").slots for i in range(200)]
    assert all(d.count(0) >= 1 and d.count(1) >= 1 and len(d) == 4 for d in dealt)
    assert sum(d.count(1) for d in dealt) > 0.9 * 3 * 200  # the winner gets nearly every extra candidate
    said = deal(4, SLOTS, HISTORY, "auto", "run-0/1").how
    assert "Thompson" in said and "idle 1 (0/8 won)" in said and "fixer,mutate 3 (4/4 won)" in said


def test_the_same_run_and_iteration_deal_alike_and_a_chain_counts_its_members() -> None:
    assert deal(6, SLOTS, HISTORY, "auto", "x/2").slots == deal(6, SLOTS, HISTORY, "auto", "x/2").slots
    assert slot_record("fixer,mutate", {**HISTORY, "mutate": AgentTally(candidates=2, wins=1)}) == (5, 6)
    assert deal(1, SLOTS, HISTORY, "auto", "x/1").slots in ([0], [1])  # fewer candidates than slots


def test_history_tallies_add_up() -> None:
    total = history_tallies(
        [{"idle": AgentTally(candidates=2, cost_usd=0.1)}, {"idle": AgentTally(candidates=1, wins=1)}]
    )
    assert total["idle"].candidates == 3 and total["idle"].wins == 1 and total["idle"].cost_usd == 0.1
