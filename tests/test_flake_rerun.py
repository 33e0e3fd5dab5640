"""Issue 30: no candidate condemned by a flake. A test outside the targets that newly fails in a
candidate's run is rerun alone before it can reject or outrank the candidate; when it passes
then, it counts as flaky, not broken. Real explore process, real pytest."""

from __future__ import annotations

from pathlib import Path

from conftest import assert_no_debris, make_repo, run_cli


def test_a_test_failing_only_beside_others_does_not_condemn_the_fix(tmp_path: Path) -> None:
    """The flake passes at the baseline (its first run) and whenever it runs alone, and fails
    beside other tests after that — as a test does whose neighbours leave state behind. Before,
    the honest fix scored no better than the baseline in every iteration (exit 1)."""
    counter = tmp_path / "flake-runs"
    repo = make_repo(
        tmp_path / "repo",
        {
            "calc.py": "def half(x):\n    return x * 2\n\n\ndef double(x):\n    return x + x\n",
            "tests/test_calc.py": "from calc import double, half\n\n\ndef test_half():\n    assert half(8) == 4\n\n\ndef test_double():\n    assert double(3) == 6\n",
            "tests/test_flake.py": f"""\
            import fcntl


            def test_polluted(request):
                with open({str(counter)!r}, "a+") as runs:
                    fcntl.flock(runs, fcntl.LOCK_EX)
                    runs.seek(0)
                    before = len(runs.read())
                    runs.write("x")
                assert before == 0 or len(request.session.items) == 1, "fails beside other tests after its first run"
            """,
        },
    )
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json", "--max-iterations", "2"])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded" and len(summary["iterations"]) == 1
    assert summary["flaky"] == ["tests/test_flake.py::test_polluted"]
    winner = next(c for c in summary["iterations"][0]["candidates"] if c["id"] == summary["iterations"][0]["winner"])
    assert winner["rerun_passed"] == ["tests/test_flake.py::test_polluted"] and winner["newly_failing"] == []
    assert "failed in candidate" in err and "passed rerun alone" in err
    # mutate's baseline recorded coverage: the winner's plain whole run times the suite from then on (40.6)
    assert "per-test limit from now on: 10s, timed by a whole run without the baseline's coverage" in err
    assert len(counter.read_text()) >= 3  # baseline, the candidate's full run, the rerun alone
    assert "x * 2" not in (repo / "calc.py").read_text()
    assert_no_debris(repo)
