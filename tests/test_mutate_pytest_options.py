"""The user's pytest configuration never blinds mutate: options that send tests to other
processes (xdist's -n, --forked), stop the run (-x) or repeat tests are turned off in mutate's
own runs (per-test coverage, screening) and named; the loop's baseline keeps them. Real pytest
subprocesses on tiny real projects."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import assert_no_debris, git, make_repo, run_cli
from explore.generators.mutate import localise
from explore.generators.mutate.screen import Job, Screener

needs_xdist = pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed")
needs_cov = pytest.mark.skipif(
    importlib.util.find_spec("pytest_cov") is None, reason="pytest-cov is not installed (the test extra has it)"
)
needs_forked = pytest.mark.skipif(
    importlib.util.find_spec("pytest_forked") is None, reason="pytest-forked is not installed"
)

SOURCE = "def double(x):\n    return x + x\n\n\ndef half(x):\n    return x * 2\n"
TESTS = (
    "from calc import double, half\n\n\n"
    "def test_half():\n    assert half(8) == 4\n\n\n"
    "def test_double():\n    assert double(3) == 6\n\n\n"
    "def test_double_zero():\n    assert double(0) == 0\n"
)
FAILING = ["tests/test_calc.py::test_half"]
PASSING = ["tests/test_calc.py::test_double", "tests/test_calc.py::test_double_zero"]


def project(root: Path, addopts: str) -> Path:
    pyproject = f'[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "{addopts}"\n\n[tool.explore]\npython = "{sys.executable}"\n'
    return make_repo(root, {"calc.py": SOURCE, "tests/test_calc.py": TESTS, "pyproject.toml": pyproject})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "addopts, named",
    [
        pytest.param("-n 2", "-n/--dist (pytest-xdist)", marks=needs_xdist),
        pytest.param("--forked", "--forked (pytest-forked)", marks=needs_forked),
        pytest.param("--cov=calc --cov-fail-under=100", "--cov (pytest-cov)", marks=needs_cov),
        ("-x", "-x/--maxfail"),
        ("--maxfail=1", "-x/--maxfail"),
    ],
)
async def test_per_test_coverage_sees_every_test_whatever_the_addopts(tmp_path: Path, addopts: str, named: str) -> None:
    """Under -n the tests ran in xdist workers, out of the controller's sight; under -x the run
    stopped at the failing test (first in the file) and no passing test was measured."""
    root = project(tmp_path / "p", addopts)
    found = await localise.collect(sys.executable, root, tmp_path / "run", FAILING, PASSING)
    assert found.measured and named in found.overridden
    assert found.spectrum.lines[("calc.py", 6)] == frozenset(FAILING)  # half's body: the failing test only
    assert found.spectrum.lines[("calc.py", 2)] == frozenset(PASSING)
    top = localise.rank(found.spectrum)[0]
    assert (top.file, top.line) == ("calc.py", 6)


@pytest.mark.anyio
async def test_per_test_coverage_without_overrides_names_none(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "-q")
    found = await localise.collect(sys.executable, root, tmp_path / "run", FAILING, PASSING)
    assert found.measured and found.overridden == []
    assert found.spectrum.lines[("calc.py", 6)] == frozenset(FAILING)


@pytest.mark.anyio
@pytest.mark.parametrize("design", ["fork", "fresh"])
@pytest.mark.parametrize(
    "addopts", [pytest.param("-n 2 -x", marks=needs_xdist), pytest.param("--cov=calc -x", marks=needs_cov), "-x"]
)
async def test_screening_runs_every_selected_test_in_its_own_process(tmp_path: Path, design: str, addopts: str) -> None:
    """A mutant that fixes the failing test: with -x, the giveup rule, not the user's option,
    decides when to stop; with -n the outcomes come back at all."""
    root = project(tmp_path / "p", addopts)
    fixed = SOURCE.replace("x * 2", "x // 2")
    broken = SOURCE.replace("x * 2", "x - 2").replace("x + x", "x * x")
    async with Screener(design, sys.executable, root, tmp_path / "run", 1) as screener:
        good = await screener.slots[0].screen(Job({str(root / "calc.py"): fixed}, FAILING, PASSING, 30.0))
        bad = await screener.slots[0].screen(
            Job({str(root / "calc.py"): broken}, FAILING + PASSING, [], 30.0, giveup=3, stop=True)
        )
    assert good.status == "ok" and good.fixed(FAILING) == FAILING and good.broken(PASSING) == []
    assert bad.status == "ok" and [bad.outcomes.get(t) for t in FAILING + PASSING] == ["failed", "failed", "passed"]
    if design == "fork":
        assert "-x/--maxfail" in screener.overridden()


@pytest.mark.parametrize(
    "addopts, named",
    [
        pytest.param("-n 2", "-n/--dist (pytest-xdist)", marks=needs_xdist),
        pytest.param(
            "--cov=pricing", "--cov (pytest-cov)", marks=needs_cov
        ),  # issue 30: "nothing to mutate" three iterations running
    ],
)
def test_demo_with_addopts_is_repaired_as_without_it(tmp_path: Path, addopts: str, named: str) -> None:
    """The issue's acceptance: `addopts = "-n 2"` with pytest-xdist installed, `--cov=<pkg>` with
    pytest-cov; the baseline runs as configured (the user's choice), mutate's own runs do not
    (pytest-cov's tracer would take over mutate's, xdist hides the tests), and the report says so."""
    from explore.cli import demo

    root = tmp_path / "demo"
    files = {
        **demo.FILES,
        "pyproject.toml": demo.FILES["pyproject.toml"]
        .replace("[tool.explore]", f'addopts = "{addopts}"\n\n[tool.explore]')
        .format(python=sys.executable),
    }
    make_repo(root, files)
    code, summary, err = run_cli(["run", str(root), "--agent", "mutate", "--json"])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded" and summary["final"]["pass_rate"] == 100.0
    assert [(i["strategy"], i["winner"]) for i in summary["iterations"]] == [
        ("aggressive", "a")
    ]  # as the plain demo (test_demo)
    source = (root / "pricing.py").read_text()
    assert "price_cents * quantity" in source and "quantity >= 10" in source
    assert all(named in (i["generator_note"] or "") for i in summary["iterations"])
    assert named in Path(summary["report"]).read_text()
    assert git(root, "status", "--porcelain") == ""
    assert_no_debris(root)


DEAF = (
    "import signal\n\nfrom calc import half\n\n\n"
    "def test_deaf():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass\n\n\n"
    "def test_half_too():\n    assert half(2) == 1\n\n\n"
    "def test_deaf_neighbour():\n    assert half(4) == 2\n"
)


@pytest.mark.anyio
async def test_per_test_coverage_goes_on_without_a_test_that_ignored_the_limit(tmp_path: Path) -> None:
    """Issue 30: the plugin's hard exit (86) used to abort localisation; the run goes on without it
    — and without it alone: pytest's --deselect would have taken test_deaf_neighbour with it."""
    root = make_repo(tmp_path / "p", {"calc.py": SOURCE, "tests/test_calc.py": TESTS, "tests/test_deaf.py": DEAF})
    deaf = [
        "tests/test_deaf.py::test_deaf",
        "tests/test_deaf.py::test_half_too",
        "tests/test_deaf.py::test_deaf_neighbour",
    ]
    failing = [*FAILING, *deaf]
    found = await localise.collect(sys.executable, root, tmp_path / "run", failing, PASSING, test_timeout=1.0)
    assert found.measured and found.hung == ["tests/test_deaf.py::test_deaf"]
    assert found.spectrum.lines[("calc.py", 6)] == frozenset({FAILING[0], *deaf[1:]})
    assert (tmp_path / "run" / "coverage-rest-1.log").exists()


@pytest.mark.anyio
async def test_per_test_coverage_run_is_bounded(tmp_path: Path) -> None:
    """Issue 30: with no per-test limit a hanging test hung the coverage run for good; its own
    limit (from the baseline's time) ends it, its process tree killed."""
    import time

    import psutil

    root = make_repo(
        tmp_path / "p",
        {"calc.py": SOURCE, "tests/test_calc.py": TESTS + "\n\ndef test_loop():\n    while True:\n        pass\n"},
    )
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="exceeded its 3s limit"):
        await localise.collect(sys.executable, root, tmp_path / "run", FAILING, PASSING, time_limit=3.0)
    assert time.monotonic() - started < 10
    assert not [
        p
        for p in psutil.process_iter(["cmdline"])
        if any(str(tmp_path / "run") in part for part in p.info["cmdline"] or [])
    ]
