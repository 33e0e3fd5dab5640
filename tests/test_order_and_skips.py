"""Issue 37.7: condemn and excuse only on reproduction, in the order it happened. A newly failing
test that passes alone is rerun after the tests that ran before it, beside the baseline's tree; a
newly skipping test is rerun in the candidate's tree and on the baseline's side by side. Real runs
(the loop in this process, a command agent), real pytest, real worktrees."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import make_repo
from test_core_runner import agent, repair

pytestmark = pytest.mark.anyio

MONEY = {
    "money.py": "from decimal import Decimal\n\n\ndef total(a, b):\n    return a - b\n",
    "tests/test_a_money.py": (
        "from decimal import Decimal\n\nfrom money import total\n\n\n"
        'def test_total():\n    assert total(Decimal("1.10"), Decimal("2.20")) == Decimal("3.30")\n'
    ),
    "tests/test_b_rate.py": (
        "from decimal import Decimal\n\n\n"
        'def test_third():\n    assert str(Decimal(1) / Decimal(3)) == "0." + "3" * 28\n'
    ),
}
PRECISION = {
    "money.py": (
        "import decimal\nfrom decimal import Decimal\n\ndecimal.getcontext().prec = 6\n\n\n"
        "def total(a, b):\n    return a + b\n"
    )
}


async def test_a_candidate_breaking_another_files_test_through_process_state_is_not_excused(tmp_path: Path) -> None:
    """The candidate fixes total() and sets decimal's precision at import: test_b_rate.py, which does
    not import money, passes alone and fails after test_a_money.py. Before, its pass alone called it
    flaky and the candidate was merged (100 %); the user's own pytest on the result failed."""
    repo = make_repo(tmp_path / "repo", MONEY)
    run, _ = await repair(repo, agent(tmp_path, {"a": {"write": PRECISION}}), max_iterations=1, parallel=1)
    [record] = run.iterations
    [a] = record.candidates
    assert a.order_dependent == ["tests/test_b_rate.py::test_third"] and a.rerun_passed == []
    assert a.newly_failing == ["tests/test_b_rate.py::test_third"]
    assert record.winner is None and run.status != "succeeded" and run.flaky == []
    assert "prec = 6" not in (repo / "money.py").read_text()


MACHINE = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def _machine_test(counter: Path) -> str:
    """Runs the first time (the baseline) and skips after, as a performance test skips on a busy
    machine: whatever tree it runs on."""
    return (
        "import pytest\n\n\n"
        "def test_fast_enough():\n"
        f"    with open({str(counter)!r}, 'a+') as runs:\n"
        "        runs.seek(0)\n"
        "        before = len(runs.read())\n"
        "        runs.write('x')\n"
        "    if before:\n"
        "        pytest.skip('the machine is too busy to time this')\n"
    )


async def test_a_test_that_skips_on_a_machine_condition_is_not_tamper(tmp_path: Path) -> None:
    """It ran at the baseline and skips in the candidate's run; rerun in the candidate's tree and on
    the baseline's side by side, it skips on both: the machine, not the change. Before, the honest
    fix was rejected ("skips 1 test(s) that ran at baseline"), as tqdm's own fix of bug 1 was."""
    counter = tmp_path / "runs"
    repo = make_repo(tmp_path / "repo", {**MACHINE, "tests/test_perf.py": _machine_test(counter)})
    fix = {"calc.py": "def add(a, b):\n    return a + b\n"}
    run, _ = await repair(repo, agent(tmp_path, {"a": {"write": fix}}), max_iterations=1, parallel=1)
    [record] = run.iterations
    [a] = record.candidates
    assert a.status.value == "ok" and a.machine_skips == ["tests/test_perf.py::test_fast_enough"], a.reason
    assert record.winner == "a" and run.merged_commit
    assert (
        "a + b"
        in subprocess.run(
            ["git", "show", f"{run.merged_commit}:calc.py"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout
    )
    assert len(counter.read_text()) >= 3  # the baseline, the candidate's run, the reruns side by side


async def test_a_skip_the_candidate_causes_is_still_tamper(tmp_path: Path) -> None:
    """The candidate turns off the feature a test checks for: rerun in its tree the test skips, on
    the baseline's it runs. Rejected as before."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "calc.py": "SUPPORTED = True\n\n\ndef add(a, b):\n    return a - b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
            "tests/test_more.py": (
                "import pytest\n\nimport calc\n\n\ndef test_sub():\n"
                "    if not calc.SUPPORTED:\n        pytest.skip('not supported here')\n"
                "    assert calc.add(5, -2) == 3\n"
            ),
        },
    )
    cheat = {"calc.py": "SUPPORTED = False\n\n\ndef add(a, b):\n    return a + b\n"}
    run, _ = await repair(repo, agent(tmp_path, {"a": {"write": cheat}}), max_iterations=1, parallel=1)
    [a] = run.iterations[0].candidates
    assert a.status.value == "rejected" and a.machine_skips == []
    assert a.reason and a.reason.startswith("skips 1 test(s) that ran at baseline"), a.reason
