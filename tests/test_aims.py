"""What a candidate is aimed at, and its withdrawal once every test it aims at is found flaky
beside the proposal (decide/aims, issue 40.4)."""

from __future__ import annotations

from explore.decide import aims
from explore.model.candidates import CandidatePlan

FAILING = ["t.py::bug", "t.py::flake"]


def test_a_plan_aimed_only_at_flaky_tests_is_withdrawn() -> None:
    flake = CandidatePlan(id="a", data={"fixed": ["t.py::flake"]})  # mutate: the tests its mutant fixed
    both = CandidatePlan(id="b", data={"fixed": ["t.py::bug", "t.py::flake"]})
    agent = CandidatePlan(id="c")  # an agent's plan: aimed at every failing test it was asked about
    assert aims.aimed_at(flake, FAILING) == {"t.py::flake"} and aims.aimed_at(agent, FAILING) == set(FAILING)
    found = aims.withdrawn([flake, both, agent], FAILING, frozenset({"t.py::flake"}))
    assert list(found) == ["a"]
    assert found["a"].startswith(
        "withdrawn: aimed only at t.py::flake, found flaky by the baseline's rerun beside the first iteration"
    )
    assert list(aims.withdrawn([flake, both, agent], FAILING, frozenset(FAILING))) == ["a", "b", "c"]
    assert aims.withdrawn([agent], [], frozenset({"t.py::flake"})) == {}  # aimed at nothing named: kept
    odd = CandidatePlan(id="d", data={"fixed": 3})  # not a list of ids: the proposal's failing tests
    assert aims.aimed_at(odd, FAILING) == set(FAILING)
