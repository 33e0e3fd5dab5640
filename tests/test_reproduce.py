"""Pure decisions of `--issue` (which tests reproduce, the majority vote) and of the `--agent`
chain (who proposes, why it moved on) — fast, no processes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from explore.generators import check_issue, resolve_agent
from explore.generators.base import FixGenerator, WrittenTests
from explore.generators.chain import ChainGenerator
from explore.model.candidates import CandidatePlan, Proposal
from explore.model.errors import BudgetExhausted, Escalation, Unavailable, UsageError
from explore.model.runstate import SampleAttempt
from explore.model.testresults import TestOutcome, TestRun
from explore.run.reproduce import escalation_reason, judge, vote

FILE = "tests/test_issue.py"


def run_of(**outcomes: tuple[str, str]) -> TestRun:
    return TestRun(
        outcomes={
            f"{FILE}::{name}": TestOutcome(id=f"{FILE}::{name}", outcome=o, message=m, file=FILE)
            for name, (o, m) in outcomes.items()
        }
    )


def judged(run: TestRun, predicted: str, sample: str = "a") -> SampleAttempt:
    attempt = SampleAttempt(sample=sample, generator="anthropic", files=[FILE])
    judge(attempt, WrittenTests(predicted={FILE: predicted}), run)
    return attempt


def test_a_failure_with_the_predicted_message_reproduces() -> None:
    attempt = judged(run_of(test_x=("failed", "AssertionError: assert '1e3' == 1000.0")), "assert  '1e3' == 1000.0")
    assert attempt.reproducing == [f"{FILE}::test_x"] and attempt.why_not is None


@pytest.mark.parametrize(
    ("outcome", "message", "predicted", "why"),
    [
        ("passed", "", "assert x", "passed on today's code"),
        ("error", "fixture 'db' not found", "assert x", "errors instead of failing"),
        ("failed", "ZeroDivisionError: division by zero", "assert x", "instead of failing as predicted ('assert x')"),
        (
            "failed",
            "AssertionError: assert 1 == 3",
            "AssertionError: 1 != 2",
            "not the predicted 'AssertionError: 1 != 2' (2 not in the failure)",
        ),
    ],
)
def test_passes_errors_and_unpredicted_failures_are_not_kept(
    outcome: str, message: str, predicted: str, why: str
) -> None:
    attempt = judged(run_of(test_x=(outcome, message)), predicted)
    assert not attempt.reproducing and why in (attempt.why_not or "")


@pytest.mark.parametrize(
    ("message", "predicted"),
    [
        (
            "AssertionError: assert 10000 == 10240",
            "AssertionError: 10000 != 10240",
        ),  # pytest's wording, unittest's prediction
        (
            "AssertionError: 10000 != 10240",
            "assert parse_size('10k') == 10240",
        ),  # the other way round (the name is in the traceback)
        ("AssertionError: assert 'a' == 'b'", 'expected "b" but got "a"'),
        ("ValueError: invalid size '10q'", "ValueError: invalid size"),
    ],
)
def test_a_failure_agreeing_in_substance_with_the_prediction_reproduces(message: str, predicted: str) -> None:
    run = TestRun(
        outcomes={
            f"{FILE}::test_x": TestOutcome(
                id=f"{FILE}::test_x",
                outcome="failed",
                message=message,
                file=FILE,
                longrepr=f"    def test_x():\n>       assert parse_size('10k') == 10240\nE       {message}",
            )
        }
    )
    attempt = judged(run, predicted)
    assert attempt.reproducing == [f"{FILE}::test_x"] and not attempt.unpredicted, attempt.why_not


def test_an_unpredicted_assertion_failure_is_kept_below_predicted_ones() -> None:
    unpredicted = judged(run_of(t=("failed", "AssertionError: assert 1 == 2")), "", "a")
    assert unpredicted.reproducing and unpredicted.unpredicted
    error = judged(run_of(t=("failed", "NameError: name 'x' is not defined")), "", "b")
    assert not error.reproducing and "errors with" in (error.why_not or "")
    predicted = judged(run_of(t=("failed", "AssertionError: assert 1 == 3")), "1 != 3", "c")
    other = judged(run_of(u=("failed", "AssertionError: assert 1 == 2")), "", "d")
    assert vote([unpredicted, other, predicted]) is predicted  # one predicted sample beats two that predicted nothing
    assert vote([unpredicted, error]) is unpredicted


SIZES = "def parse_size(text):\n    return int(text[:-1]) * 1000\n"


@pytest.mark.anyio
async def test_real_pytest_and_unittest_failures_are_judged_by_what_they_mean(tmp_path: Path) -> None:
    """Real pytest processes: the acceptance of issue 28 on both assertion styles, and a NameError."""
    from explore.edges.testing import make_command, run_tests

    files = {
        "sizes.py": SIZES,
        "tests/test_pytest_style.py": "from sizes import parse_size\n\n\ndef test_k():\n    assert parse_size('10k') == 10240\n",
        "tests/test_unittest_style.py": (
            "import unittest\n\nfrom sizes import parse_size\n\n\nclass T(unittest.TestCase):\n"
            "    def test_k(self):\n        self.assertEqual(parse_size('10k'), 10240)\n"
        ),
        "tests/test_name_error.py": "from sizes import parse_size\n\n\ndef test_k():\n    assert parse_sizes('10k') == 10240\n",
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    tests = [n for n in files if n.startswith("tests/")]
    run = await run_tests(make_command(None, None, sys.executable), tmp_path, tmp_path / "tests.log", select=tests)
    assert {i.split("::")[0]: o.outcome for i, o in run.outcomes.items()} == dict.fromkeys(tests, "failed")
    for file in tests:
        attempt = SampleAttempt(sample="a", generator="command", files=[file])
        judge(attempt, WrittenTests(predicted={file: "AssertionError: 10000 != 10240"}), run)
        assert bool(attempt.reproducing) == (file != "tests/test_name_error.py"), (file, attempt.why_not)
    assert "NameError" in (attempt.why_not or "") and "instead of failing" in (attempt.why_not or "")


def test_no_file_and_collection_errors_say_so() -> None:
    none = SampleAttempt(sample="a", generator="command", discarded=["calc.py: not a test file, discarded"])
    judge(none, WrittenTests(), TestRun())
    assert none.why_not == "wrote no test file (calc.py: not a test file, discarded)"
    broken = judged(TestRun(collection_errors=[FILE], infra_error="collection errors in 1 file(s)"), "assert x")
    assert broken.why_not and "do not run" in broken.why_not


def test_the_largest_agreeing_group_wins_and_the_others_say_why() -> None:
    a = judged(run_of(t=("failed", "AssertionError: assert 1 == 2")), "assert 1 == 2", "a")
    b = judged(run_of(t=("failed", "ValueError: bad")), "ValueError", "b")
    c = judged(run_of(u=("failed", "AssertionError: assert 1 == 2")), "assert 1 == 2", "c")
    d = judged(run_of(t=("passed", "")), "assert 1 == 2", "d")
    assert vote([a, b, c, d]) is a
    assert (
        "disagree with the majority (2 of 4" in (b.why_not or "")
        and c.why_not == "agrees with sample a, whose tests were kept"
    )
    assert vote([d]) is None
    assert "sample d (anthropic) wrote tests/test_issue.py: " in escalation_reason([d])


class Member(FixGenerator):
    def __init__(self, name: str, result: Proposal | Exception) -> None:
        self.name, self.result, self.calls = name, result, 0

    async def propose(self, request: object) -> Proposal:
        self.calls += 1
        if isinstance(self.result, Exception):
            raise self.result
        return self.result

    async def realise(self, plan: CandidatePlan, context: object):
        return self.name


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("failure", "why"),
    [
        (Unavailable("529 past retries", "wait"), "first unavailable: 529 past retries"),
        (BudgetExhausted("$1.00 spent"), "first out of budget: $1.00 spent"),
        (RuntimeError("bug"), "first raised RuntimeError: bug"),
        (Proposal(reason="no idea here"), "first proposed nothing: no idea here"),
    ],
)
async def test_chain_moves_on_and_says_why(failure: Proposal | Exception, why: str) -> None:
    second = Member("second", Proposal(plans=[CandidatePlan(hypothesis="h")]))
    chain = ChainGenerator([Member("first", failure), second])  # type: ignore[list-item]
    proposal = await chain.propose(None)  # type: ignore[arg-type]
    assert proposal.fallbacks == [why] and [p.generator for p in proposal.plans] == ["second"]
    assert await chain.realise(proposal.plans[0], None) == "second"  # type: ignore[arg-type]
    # the next iteration starts at the head again
    await chain.propose(None)  # type: ignore[arg-type]
    assert chain.members[0].calls == 2  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_chain_escalates_a_refused_key_and_reports_when_all_fail() -> None:
    refused = ChainGenerator(
        [
            Member("first", Escalation("external_service", "401", "fix the key")),  # type: ignore[list-item]
            Member("second", Proposal(plans=[CandidatePlan()])),
        ]
    )
    with pytest.raises(Escalation, match="401"):
        await refused.propose(None)  # type: ignore[arg-type]
    empty = ChainGenerator([Member("first", Proposal()), Member("second", RuntimeError("x"))])  # type: ignore[list-item]
    proposal = await empty.propose(None)  # type: ignore[arg-type]
    assert (
        not proposal.plans
        and len(proposal.fallbacks) == 2
        and proposal.reason.startswith("every generator of the chain failed")
    )


def test_agent_chains_resolve_each_member(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    assert resolve_agent("command,mutate", "aider") == "command,mutate"
    for bad in ("mutate,mutate", "auto,mutate", "mutate,", "anthropic,mutate"):
        with pytest.raises(UsageError):
            resolve_agent(bad, None)
    check_issue("anthropic,mutate")
    with pytest.raises(UsageError, match="anthropic or command"):
        check_issue("mutate")
