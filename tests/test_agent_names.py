"""Issue 41: an agent label — one generator, a chain (`a,b`), a fleet of slots (`a,b + c`) — is read
in one place (model/agentnames), so what asks which generators a run uses (hints, the advice of a
run that gave up, a slot's record, `--issue`) reads a fleet's slots as it reads a chain's members."""

from __future__ import annotations

from explore.decide import dealing, escalation, stop
from explore.generators import check_issue
from explore.model import agentnames
from explore.model.config import parse_search_budget
from explore.model.runstate import EscalationCategory, RunState
from explore.model.tally import AgentTally


def test_a_label_reads_as_slots_of_chains() -> None:
    label = "claude-code,mutate + codex"
    assert agentnames.slots(label) == ["claude-code,mutate", "codex"]
    assert [agentnames.chain(s) for s in agentnames.slots(label)] == [["claude-code", "mutate"], ["codex"]]
    assert agentnames.members(label) == ["claude-code", "mutate", "codex"]
    assert agentnames.members("mutate + mutate") == ["mutate"] and agentnames.slots("mutate") == ["mutate"]
    assert agentnames.members("anthropic,command,mutate") == ["anthropic", "command", "mutate"]


def test_a_fleet_of_generators_that_read_no_hint_is_offered_none() -> None:
    """Before: `mutate + mutate` read as one generator of that name, assumed to read hints."""
    assert not escalation.uses_hints("mutate + mutate") and not escalation.uses_hints("mutate")
    assert escalation.uses_hints("mutate + claude-code") and escalation.uses_hints("codex,mutate + mutate")
    ambiguous = EscalationCategory.ambiguous_requirements
    fleet = "\n".join(escalation.options_for("run-1", 3, ambiguous, "mutate + mutate"))
    assert "--hint" not in fleet and "mutate + mutate cannot use a hint" in fleet
    assert 'explore resume run-1 --hint "' in "\n".join(escalation.options_for("run-1", 3, ambiguous, "mutate + codex"))


def test_a_fleet_that_gave_up_is_advised_by_what_its_slots_hold() -> None:
    clock = stop.SearchClock(parse_search_budget("10x"), suite_s=0.3, started=0.0)
    run = RunState(run_id="r1", repo="/repo")
    only_mutate = stop.account("search_complete", clock, 4.0, run, "mutate + mutate")
    assert only_mutate.spend_more and "a generator that reads the code" in only_mutate.spend_more[0]
    readers = stop.account("search_complete", clock, 4.0, run, "claude-code,mutate + codex")
    assert readers.spend_more and "another generator" in readers.spend_more[0]  # it had code readers


def test_a_slots_record_and_the_issue_check_read_the_same_label() -> None:
    history = [{"claude-code": AgentTally(candidates=2, wins=1), "codex": AgentTally(candidates=1)}]
    assert dealing.slot_record("claude-code, mutate", history) == dealing.Record(iterations=1, won=1)
    check_issue("mutate + command")  # a slot that writes tests: accepted (raises otherwise)
