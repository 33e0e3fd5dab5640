"""Issue 39.7: a timeout at the baseline is not a target until it is a real one. A test that
overran the per-test limit at the baseline runs again alone with a generous limit; one that passes
then is slow, not failing, and one that hangs again stays a target. A real run (the loop in this
process, a command agent), real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import make_repo
from explore.run import reports
from test_core_runner import agent, repair

pytestmark = pytest.mark.anyio

CALC = "def add(a, b):\n    return a - b\n\n\ndef scale(x):\n    return x * 2\n"
WALK = "def steps_to(n):\n    i = 0\n    while i != n:\n        i -= 1\n    return -i\n"
SLOW = "tests/test_slow.py::test_roundtrip"
HANG = "tests/test_walk.py::test_steps"


def _files(counter: Path) -> dict[str, str]:
    """test_roundtrip is slow the first time it runs (the baseline, as under load) and fast after;
    test_add fails on a real bug; test_steps loops for ever on another."""
    return {
        "calc.py": CALC,
        "walk.py": WALK,
        "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        "tests/test_walk.py": "from walk import steps_to\n\n\ndef test_steps():\n    assert steps_to(3) == 3\n",
        "tests/test_slow.py": (
            "import time\n\nfrom calc import scale\n\n\n"
            "def test_roundtrip():\n"
            f"    with open({str(counter)!r}, 'a+') as runs:\n"
            "        runs.seek(0)\n"
            "        first = not runs.read()\n"
            "        runs.write('x')\n"
            "    if first:\n"
            "        time.sleep(3)  # the project's own slowness, under load\n"
            "    assert scale(2) == 4\n"
        ),
    }


async def test_a_slow_test_that_overruns_the_limit_once_is_not_a_target_and_a_hang_still_is(tmp_path: Path) -> None:
    """Candidate a edits scale() to no effect on either bug (its only gain would have been the slow
    test); b fixes add() and the loop. Before, test_roundtrip was a target (timeout at the
    baseline), and a candidate that "fixed" it gained as much as one that fixed a bug."""
    counter = tmp_path / "runs"
    repo = make_repo(tmp_path / "repo", _files(counter))
    unrelated = {"calc.py": CALC.replace("x * 2", "x + x")}
    fix = {"calc.py": CALC.replace("a - b", "a + b"), "walk.py": WALK.replace("i -= 1", "i += 1").replace("-i", "i")}
    run, events = await repair(
        repo, agent(tmp_path, {"a": {"write": unrelated}, "b": {"write": fix}}), test_timeout=1.0, parallel=2
    )
    assert (run.baseline.passed, run.baseline.total) == (1, 3)  # test_roundtrip passed, rerun alone
    assert run.baseline_failing == ["tests/test_calc.py::test_add", HANG]  # the hang hung again: still a target
    assert run.baseline_slow == [SLOW] and [h.test for h in run.baseline_timeouts] == [HANG]
    assert any(f"slow, not failing: {SLOW}" in str(e) for e in events)
    assert f"## Slow at the baseline, not failing (1: overran the per-test limit, passed rerun alone)\n- `{SLOW}`" in (
        reports.markdown(run)
    )
    [record] = run.iterations
    assert record.winner == "b" and run.status == "succeeded"
