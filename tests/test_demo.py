"""The README's demo: two bugs in two functions, repaired offline by mutate. `auto` sees failures
pointing at distinct places and goes aggressive: one candidate combining both fixes. Conservative
takes two iterations — the second edit only becomes a fix once the first is merged."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import assert_no_debris, git, run_cli
from explore.cli.demo import create_demo


def _fixed(target: Path) -> None:
    source = (target / "pricing.py").read_text()
    assert "price_cents * quantity" in source and "quantity >= 10" in source
    assert git(target, "status", "--porcelain") == ""
    assert_no_debris(target)


def test_demo_is_repaired_by_mutate_in_one_aggressive_iteration(tmp_path: Path) -> None:
    target = tmp_path / "demo project"
    code, summary, err = run_cli(["demo", str(target), "--json"])
    assert code == 0, err
    assert summary["status"] == "succeeded" and summary["final"]["pass_rate"] == 100.0
    [iteration] = summary["iterations"]
    assert iteration["strategy"] == "aggressive" and "distinct locations" in iteration["strategy_reason"]
    winner = next(c for c in iteration["candidates"] if c["id"] == iteration["winner"])
    assert winner["operator"] == "arithmetic+comparison", winner
    report = Path(summary["report"]).read_text()
    # one time line, explore's own start booked as a phase (shown when it took 0.05 s or more:
    # with its bytecode cached it can take less)
    assert iteration["timing"]["start"] > 0, iteration["timing"]
    [line] = [line for line in report.splitlines() if line.startswith("Time: ")]
    assert re.match(r"Time: (start \d+\.\ds · )?baseline \d+\.\ds · ", line) and "screening" in line, line
    _fixed(target)


def test_conservative_takes_two_iterations_and_times_every_phase(tmp_path: Path) -> None:
    target = create_demo(tmp_path / "demo")
    code, summary, err = run_cli(["run", "--agent", "mutate", "--strategy", "conservative", "--json"], cwd=target)
    assert code == 0, err
    assert [i["winner"] for i in summary["iterations"]] == ["a", "a"]
    operators = [c["operator"] for i in summary["iterations"] for c in i["candidates"] if c["id"] == i["winner"]]
    assert operators == ["arithmetic", "comparison"], operators
    first, second = (i["timing"] for i in summary["iterations"])
    assert first["baseline"] > 0 and second["baseline"] == 0  # the baseline is booked once, on the first iteration
    for timing in (first, second):  # every phase mutate and the loop go through took measurable time
        assert timing["screening"] > 0 and timing["fanout"] > 0 and timing["merge"] > 0
        assert (
            timing["prepare"] > 0 and timing["propose"] >= timing["coverage"] + timing["prepare"] + timing["screening"]
        )
    # the first iteration's per-test coverage came with the baseline run; the second measures afresh
    assert first["coverage"] < 0.2 < second["coverage"], (first, second)
    report = Path(summary["report"]).read_text()
    # explore's start is booked on the first iteration (the line leaves out phases under 0.05 s)
    assert first["start"] > 0 and second["start"] == 0, (first, second)
    times = [line for line in report.splitlines() if line.startswith("Time: ")]
    assert len(times) == 2 and re.match(r"Time: (start \d+\.\ds · )?baseline ", times[0]), times
    assert "baseline" not in times[1] and all("screening" in line for line in times), times
    _fixed(target)
