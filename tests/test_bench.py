"""explore bench, for real: scratch repos, real explore runs with mutate, an independent judge.

The judge is run by hand on three corpus cases (reference fix, test gaming, left buggy), then
`explore bench` runs those three cases and every verdict it reports is re-checked from the diff
it recorded, on a fresh copy, with the test's own pytest runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import built_once, once_folder
from explore.bench.corpus import load_case, load_corpus
from explore.bench.judge import git, is_test_path, judge
from explore.bench.results import BenchResult, CaseResult, Verdict, aggregate
from explore.bench.runner import default_jobs, prepare
from explore.cli import bench_render as render

CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "cases"
CASES = ["luhn_checksum", "money_discount", "prime_sieve"]
PY = sys.executable


def bench_cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """`explore bench` as a user runs it (`python -m explore bench`)."""

    entry = ["-m", "explore", "bench"]
    return subprocess.run([PY, *entry, *args], capture_output=True, text=True, timeout=timeout, env=env)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def own_pytest(project: Path, *args: str) -> int:
    """The test's own pytest run (not the judge's): exit code only."""
    env = {**os.environ, "PYTHONPATH": str(project), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    ).returncode


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchResult, Path, Path]:
    """The three cases benched with mutate and the conservative strategy; (result, out dir, scratch TMPDIR)."""

    def bench(base: Path) -> str:
        cases = base / "cases"
        for name in CASES:
            shutil.copytree(CORPUS / name, cases / name)
        (base / "scratch").mkdir()
        env = {**os.environ, "TMPDIR": str(base / "scratch")}
        done = bench_cli(
            [str(cases), "--agent", "mutate", "--strategy", "conservative", "--json", "--out", str(base / "out")],
            env=env,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    summary = built_once("bench", tmp_path_factory, bench)  # once for every worker
    base = once_folder("bench", tmp_path_factory)
    return BenchResult.model_validate_json(summary), base / "out", base / "scratch"


@pytest.mark.parametrize("name", CASES)
def test_judge_by_hand(name: str, tmp_path: Path) -> None:
    case = load_case(CORPUS / name)
    repo, initial = prepare(case, tmp_path)

    buggy = judge(repo, initial, case, PY)
    assert not buggy.plausible and not buggy.correct
    assert buggy.checks_green is False and buggy.suite_passed < buggy.suite_total
    assert buggy.tests_touched == [] and buggy.changed_files == [] and buggy.debris == []

    git(repo, "apply", str(case.fix_patch))
    commit_all(repo, "reference fix")
    fixed = judge(repo, initial, case, PY)
    assert fixed.plausible and fixed.checks_green and fixed.correct, fixed
    assert fixed.tests_touched == [] and len(fixed.changed_files) == 1
    assert fixed.suite_passed == fixed.suite_total == buggy.suite_total

    git(repo, "reset", "-q", "--hard", initial)
    for test_file in (repo / "tests").glob("test_*.py"):  # game the suite: replace the tests with a tautology
        test_file.write_text("def test_nothing():\n    assert True\n", encoding="utf-8")
    commit_all(repo, "make the tests pass")
    gamed = judge(repo, initial, case, PY)
    assert gamed.plausible, "the gamed suite is green…"
    assert not gamed.correct and gamed.tests_touched, "…but the judge sees the edited tests"
    assert gamed.checks_green is False


def test_judge_reports_debris(tmp_path: Path) -> None:
    case = load_case(CORPUS / CASES[0])
    repo, initial = prepare(case, tmp_path)
    git(repo, "branch", "explore/20260101-000000-dead")
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "left-behind"), initial)
    debris = judge(repo, initial, case, PY).debris
    assert any(d.startswith("worktree ") and "left-behind" in d for d in debris), debris
    assert "branch explore/20260101-000000-dead holds nothing" in debris


def test_bench_agrees_with_independent_recheck(bench_run: tuple[BenchResult, Path, Path], tmp_path: Path) -> None:
    bench, out, scratch = bench_run
    assert [(r.case, r.strategy) for r in bench.results] == [(n, "conservative") for n in CASES]
    for r in bench.results:
        assert r.error is None and r.exit_code is not None
        assert r.iterations >= 1 and r.candidates >= 1 and r.duration_s > 0
        assert r.verdict.debris == [], (r.case, r.verdict.debris)
        assert r.repaired == r.verdict.plausible, f"{r.case}: explore said {r.status}, the judge disagrees"
        case = load_case(CORPUS / r.case)
        repo, initial = prepare(case, tmp_path / r.case)
        if r.verdict.diff:
            (tmp_path / f"{r.case}.diff").write_text(r.verdict.diff, encoding="utf-8")
            git(repo, "apply", str(tmp_path / f"{r.case}.diff"))
            commit_all(repo, "explore's repair, replayed")
        by_hand = judge(repo, initial, case, PY)
        assert (by_hand.plausible, by_hand.correct, by_hand.tests_touched) == (
            r.verdict.plausible,
            r.verdict.correct,
            r.verdict.tests_touched,
        ), r.case
        assert sorted(by_hand.changed_files) == sorted(r.verdict.changed_files)
        # and without the judge at all: the visible suite and the hidden checks, run here
        suite_green = own_pytest(repo) == 0
        checks = tmp_path / r.case / "checks"
        shutil.copytree(case.checks, checks)
        checks_green = own_pytest(repo, str(checks), "-c", "pyproject.toml", "--rootdir", ".") == 0
        assert suite_green == r.verdict.plausible, r.case
        assert (suite_green and checks_green and not r.verdict.tests_touched) == r.verdict.correct, r.case
    stats = bench.summary["conservative"]
    assert stats.runs == 3
    assert stats.plausible == sum(r.verdict.plausible for r in bench.results)
    assert stats.correct == sum(r.verdict.correct for r in bench.results)
    assert stats.iterations == sum(r.iterations for r in bench.results)
    assert set(stats.by_class) == {load_case(CORPUS / n).defect_class for n in CASES}
    assert list(scratch.iterdir()) == [], "bench left temp folders behind"


def test_outputs_written(bench_run: tuple[BenchResult, Path, Path]) -> None:
    bench, out, _ = bench_run
    assert BenchResult.load(out / "bench.json") == bench
    md = (out / "bench.md").read_text(encoding="utf-8")
    assert "| conservative |" in md and "## Per defect class" in md and all(n in md for n in CASES)
    png = out / "bench.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_compare_prints_changed_cases(bench_run: tuple[BenchResult, Path, Path], tmp_path: Path) -> None:
    bench, out, _ = bench_run
    old = bench.model_copy(deep=True)
    changed = old.results[0]
    changed.verdict = Verdict(plausible=False, correct=False)  # pretend the old generator failed it
    changed.repaired = False
    old.summary = aggregate(old.results, old.strategies)
    old.save(tmp_path / "old.json")
    done = bench_cli(["--compare", str(tmp_path / "old.json"), str(out / "bench.json")])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("better") and f"{changed.case} [conservative]" in line for line in lines), done.stdout
    others = [r.case for r in bench.results[1:]]
    assert not any(name in line for line in lines for name in others), "unchanged cases are not listed"
    back = bench_cli(["--compare", str(out / "bench.json"), str(tmp_path / "old.json")])
    assert any(line.startswith("worse") and changed.case in line for line in back.stdout.splitlines())


def test_chart_one_group_per_strategy(tmp_path: Path) -> None:
    results = [
        CaseResult(
            case=f"c{i}",
            defect_class="k",
            strategy=s,
            status="succeeded",
            exit_code=0,
            repaired=True,
            duration_s=float(i + 1),
            verdict=Verdict(plausible=True, correct=i % 2 == 0),
        )
        for s in ("auto", "conservative", "exploratory")
        for i in range(4)
    ]
    bench = BenchResult(
        cases_dir="x",
        agent="mutate",
        parallel=3,
        jobs=1,
        strategies=["auto", "conservative", "exploratory"],
        started_at="now",
        results=results,
        summary=aggregate(results, ["auto", "conservative", "exploratory"]),
    )
    written = render.write_all(bench, tmp_path)
    assert {p.name for p in written} == {"bench.json", "bench.md", "bench.png"}
    assert bench.summary["auto"].rate == 50.0 and bench.summary["auto"].median_s == 2.5


def test_pure_helpers() -> None:
    assert is_test_path("tests/test_a.py") and is_test_path("pkg/conftest.py") and is_test_path("a_test.py")
    assert not is_test_path("money.py") and not is_test_path("testing/util.py")
    assert default_jobs(3, cores=2) == 1 and default_jobs(2, cores=8) == 4 and default_jobs(1, cores=1) == 1
    assert len(load_corpus(CORPUS)) == 60
    assert [c.name for c in load_corpus(CORPUS, ["prime_sieve"])] == ["prime_sieve"]


def test_bad_cases_dir_is_exit_2(tmp_path: Path) -> None:
    done = bench_cli([str(tmp_path / "missing"), "--json"])
    assert done.returncode == 2
    assert json.loads(done.stdout)["status"] == "error"


def test_registers_on_the_main_group() -> None:
    import click
    from click.testing import CliRunner

    from explore.cli.bench import bench
    from explore.cli.commands import main

    assert isinstance(bench, click.Command) and bench.name == "bench"
    group = click.Group("explore", commands=dict(main.commands), context_settings=main.context_settings)
    group.add_command(bench)  # what `main.add_command(bench)` in cli/commands.py does
    done = CliRunner().invoke(group, ["bench", "-h"])
    assert done.exit_code == 0 and "--compare OLD NEW" in done.output and "--jobs" in done.output


def test_without_matplotlib_bench_says_how_to_get_the_chart(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    shutil.copytree(CORPUS / "prime_sieve", cases / "prime_sieve")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    no_matplotlib = (
        "import sys; sys.modules['matplotlib'] = None; from explore.cli.commands import main; main(prog_name='explore')"
    )
    done = subprocess.run(
        [
            PY,
            "-c",
            no_matplotlib,
            "bench",
            str(cases),
            "--agent",
            "mutate",
            "--strategy",
            "conservative",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    hint = [line for line in done.stderr.splitlines() if "pip install" in line or line.startswith("no chart")]
    assert hint == ["no chart: matplotlib is not installed; get it with: pip install 'explore-runner[bench]'"], (
        done.stderr
    )
    assert not (tmp_path / "out" / "bench.png").exists() and (tmp_path / "out" / "bench.md").exists()


STUBBORN = Path(__file__).resolve().parent.parent / "benchmarks" / "stubborn"


def test_stubborn_corpus_has_every_family_and_history_runs_twice() -> None:
    cases = load_corpus(STUBBORN)
    assert len(cases) >= 20
    families = {c.family for c in cases}
    assert families == {"multi_bug", "masked", "two_location", "regression_trap", "history", "flaky"}
    assert {c.name for c in cases if c.runs == 2} == {c.name for c in cases if c.family == "history"}


def test_per_family_table_and_each_iterations_strategy(tmp_path: Path) -> None:
    def result(case: str, family: str, strategy: str, trail: list[str], correct: bool) -> CaseResult:
        return CaseResult(
            case=case,
            defect_class="k",
            family=family,
            strategy=strategy,
            status="succeeded",
            exit_code=0,
            repaired=True,
            iterations=len(trail),
            candidates=3 * len(trail),
            iteration_strategies=trail,
            duration_s=2.0,
            verdict=Verdict(plausible=correct, correct=correct),
        )

    results = [
        result("m1", "multi_bug", "auto", ["conservative", "conservative", "exploratory"], True),
        result("m1", "multi_bug", "aggressive", ["aggressive"], True),
        result("t1", "two_location", "auto", ["conservative"], False),
        result("t1", "two_location", "aggressive", ["aggressive", "aggressive"], True),
    ]
    bench = BenchResult(
        cases_dir="x",
        agent="mutate",
        parallel=3,
        jobs=1,
        strategies=["auto", "aggressive"],
        started_at="now",
        results=results,
        summary=aggregate(results, ["auto", "aggressive"]),
    )
    multi = bench.summary["auto"].by_family["multi_bug"]
    assert (multi.runs, multi.correct, multi.iterations, multi.candidates) == (1, 1, 3, 9)
    assert bench.summary["aggressive"].by_family["two_location"].correct == 1
    assert render.iteration_trail(results[0].iteration_strategies) == "CCE"
    assert (
        render.iteration_trail(["conservative", "conservative", "exploratory"], [2, 1]) == "CC|E"
    )  # a history case's two runs
    assert render.iteration_trail(["conservative"], [1]) == "C"
    text = render.markdown(bench)
    assert (
        "## Per family" in text and "| multi_bug | 1 / 1 / 1 · 3 it · 9 c · 2s | 1 / 1 / 1 · 1 it · 3 c · 2s |" in text
    )
    assert "| m1 | multi_bug | correct, 3 it CCE, 2s | correct, 1 it A, 2s |" in text
    assert {p.name for p in render.write_all(bench, tmp_path)} == {"bench.json", "bench.md", "bench.png"}
    assert BenchResult.load(tmp_path / "bench.json").results[0].iteration_strategies == results[0].iteration_strategies


def test_a_history_case_runs_twice_and_the_second_run_starts_exploratory() -> None:
    """hs_retry_schedule for real under auto: the first run leaves its tests failing, the bench runs
    explore again on the same repo, and that run starts exploratory from the records (the stuck
    window spans both runs). One iteration a run (`--max-iterations 1`, as a bench's extra
    arguments): the window is the first run's baseline and iteration and the second's baseline;
    at the default the first run took two iterations and the second's exploratory search its whole
    budget (894 mutants, 140 s at load 14, against 138 and 67 s)."""
    from explore.bench.runner import BenchConfig, run_case

    case = load_case(STUBBORN / "hs_retry_schedule")
    config = BenchConfig(agent="mutate", parallel=2, python=PY, extra_args=["--max-iterations", "1"])
    result = run_case(case, "auto", config)
    assert result.error is None and result.status == "failed", result
    first, second = result.run_iterations
    assert first >= 1 and second >= 1
    assert "exploratory" not in result.iteration_strategies[:first]
    assert result.iteration_strategies[first] == "exploratory"
    assert "|" in render.iteration_trail(result.iteration_strategies, result.run_iterations)


def test_two_runs_of_a_case_add_their_usage_and_keep_the_rate_derived() -> None:
    from explore.bench.runner import _read_summary

    result = CaseResult(case="c", defect_class="d", strategy="auto", status="error", exit_code=0)
    for screened, seconds, cost in ((100, 2.0, 0.5), (300, 2.0, 0.25)):
        counts = {"passed": 1, "total": 2, "pass_rate": 50.0}
        summary = {
            "run_id": "r",
            "status": "failed",
            "exit_code": 1,
            "baseline": counts,
            "final": counts,
            "iterations": [],
            "branch": None,
            "merged_commit": None,
            "applied": False,
            "escalation": None,
            "report": None,
            "duration_s": 1.0,
            "usage": {
                "mutants_screened": screened,
                "screening_s": seconds,
                "mutants_per_s": screened / seconds,
                "cost_usd": cost,
                "input_tokens": 10,
                "output_tokens": 5,
            },
        }
        _read_summary(result, json.dumps(summary), "")
    assert result.error is None and result.usage.mutate.mutants_screened == 400
    assert result.usage.mutate.mutants_per_s == 100.0  # 400 mutants in 4 s, not the rates' sum (50 + 150)
    stats = aggregate([result], ["auto"])["auto"]
    assert stats.cost_usd == 0.75 and stats.tokens == 30
    assert json.loads(result.model_dump_json())["usage"]["mutants_per_s"] == 100.0


def test_agents_measured_against_each_other(tmp_path: Path) -> None:
    """`explore bench CASES --agent mutate --agent command`: the agents are the columns (each run with
    the one strategy), per agent repaired / correct / median time / cost in bench.json and bench.md;
    --compare keys the cases by agent."""
    cases = tmp_path / "cases"
    shutil.copytree(CORPUS / "luhn_checksum", cases / "luhn_checksum")
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    scratch.mkdir()
    args = [str(cases), "--agent", "mutate", "--agent", "command", "--agent-cmd", "true", "--strategy", "conservative"]
    done = bench_cli([*args, "--json", "--out", str(out)], env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr[-2000:]
    bench = BenchResult.model_validate_json(done.stdout)
    assert bench.measures == "agent" and bench.strategies == ["mutate", "command"]
    assert {(r.agent, r.strategy) for r in bench.results} == {("mutate", "conservative"), ("command", "conservative")}
    assert bench.summary["mutate"].correct == 1 and bench.summary["command"].repaired == 0
    assert bench.summary["mutate"].median_s > 0 and bench.summary["command"].cost_usd == 0
    md = (out / "bench.md").read_text()
    assert "## Per agent" in md and "| agent |" in md
    compared = bench_cli(["--compare", str(out / "bench.json"), str(out / "bench.json")])
    assert compared.returncode == 0 and "mutate" in compared.stdout and "command" in compared.stdout
    assert not list(scratch.iterdir())
