"""A candidate none of whose tests ran (whole-suite first: a validated one outranks it even if it
passed every test, or it is the twin of such a one) is shown as not tested wherever its pass rate
would be: the report, the live view, the event text, the JSON and the next iteration's prompts. Its
pass_rate is no measurement (it read 0.0 %, which no run found)."""

from __future__ import annotations

import json
from pathlib import Path

from explore.cli.live import Row
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand
from explore.generators.anthropic.context import history_text
from explore.generators.base import ProposalRequest
from explore.generators.prompt import build_prompt
from explore.model.candidates import CandidateResult, CandidateStatus, IterationRecord
from explore.model.events import CandidateEvent, Phase, result_text
from explore.model.testresults import TestOutcome
from explore.run.reports import rate

WHY = "not tested: candidate a outranks it even if it passed every test"


def untested() -> CandidateResult:
    return CandidateResult(
        id="b", status=CandidateStatus.ok, validated=False, tested=False, progress=WHY, reason=WHY, hypothesis="swap"
    )


def test_an_untested_candidate_shows_no_pass_rate() -> None:
    c = untested()
    assert (
        rate(c) == "not tested" and rate(CandidateResult(id="a", status=CandidateStatus.ok, pass_rate=75.0)) == "75.0%"
    )
    assert result_text(c) == WHY
    row = Row("b")
    row.apply(CandidateEvent("b", Phase.finished, result=c))
    assert row.phase == "not tested" and row.pass_rate is None
    assert json.loads(c.model_dump_json())["tested"] is False
    assert CandidateResult(id="a", status=CandidateStatus.ok).tested  # an older record: tested


def test_the_next_prompts_say_it_was_not_tested(tmp_path: Path) -> None:
    record = IterationRecord(n=1, strategy="conservative", pass_rate=75.0, candidates=[untested()])
    request = ProposalRequest(
        repo_root=tmp_path,
        scratch=tmp_path,
        current_commit="c",
        base_commit="c",
        n=1,
        iteration=2,
        strategy=load_strategies()["conservative"],
        failing=[TestOutcome(id="t.py::x", outcome="failed")],
        passing=[],
        test_command=TestCommand(python="python"),
        run_dir=tmp_path,
        history=[record],
    )
    for text in (build_prompt(request), history_text(request)):
        line = next(line for line in text.splitlines() if "swap" in line)
        assert "not tested" in line and "0.0%" not in line, line
