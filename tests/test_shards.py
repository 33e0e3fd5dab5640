"""Shard plans (pure), their merge, and sharded runs through the real local executor: real git
repos, real worktrees, real pytest processes."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import git
import pytest

from conftest import assert_no_debris, make_repo, run_cli
from explore.decide import shard_plan
from explore.edges import procs
from explore.edges.testing import TestCommand, with_isolation
from explore.edges.worktrees import WorktreePool
from explore.executors import shards
from explore.executors.jobs import ExecutorName, JobResult, JobStatus, TestJob
from explore.executors.local import LocalExecutor
from explore.generators.mutate.localise import load_result
from explore.model.testresults import TestOutcome, TestRun
from explore.run import durations

CASES = Path(__file__).resolve().parent.parent / "benchmarks" / "cases"
PY = sys.executable
CMD = TestCommand(python=PY)


def test_plan_balances_recorded_durations_heaviest_first() -> None:
    weights = {"t/a.py": 9.0, "t/b.py": 5.0, "t/c.py": 4.0, "t/d.py": 1.0, "t/e.py": 1.0}
    groups = shard_plan.plan(weights, 2)
    loads = sorted(sum(weights[f] for f in g) for g in groups)
    assert loads == [10.0, 10.0]
    assert sorted(f for g in groups for f in g) == sorted(weights)


def test_plan_without_durations_balances_by_test_count_and_never_splits_one_file() -> None:
    ids = (
        [f"t/a.py::t{i}" for i in range(4)] + [f"t/b.py::t{i}" for i in range(2)] + [f"t/c.py::t{i}" for i in range(2)]
    )
    weights = shard_plan.file_weights(ids)
    assert weights == {"t/a.py": 4, "t/b.py": 2, "t/c.py": 2}
    assert shard_plan.plan(weights, 2) == [["t/a.py"], ["t/b.py", "t/c.py"]]
    assert shard_plan.plan(weights, 8) == [["t/a.py"], ["t/b.py"], ["t/c.py"]]
    assert shard_plan.plan({"t/a.py": 1.0}, 4) == []  # one file: nothing to split
    assert shard_plan.plan(weights, 1) == []


def test_the_default_shard_count_adds_a_shard_while_it_saves_more_than_its_process_costs() -> None:
    assert shard_plan.worthwhile(4, 0.0) == 1  # nothing measured
    assert shard_plan.worthwhile(3, 0.3, overhead_s=0.7) == 1  # a short suite is not worth another process
    assert shard_plan.worthwhile(3, 2.5, overhead_s=1.6) == 2  # 1.25 s saved by a second, 0.42 s by a third < 1.6 / 3
    assert shard_plan.worthwhile(3, 2.5, overhead_s=1.0) == 3
    assert shard_plan.worthwhile(4, 20.0, overhead_s=1.0) == 4
    assert shard_plan.worthwhile(4, 1800.0, overhead_s=3.0) == 4  # never more than the free slots
    assert shard_plan.worthwhile(1, 1800.0) == 1
    run = TestRun(outcomes={"a.py::x": TestOutcome(id="a.py::x", outcome="passed", duration_s=2.0)}, duration_s=3.5)
    assert (shard_plan.test_seconds(run), shard_plan.process_overhead(run)) == (2.0, 1.5)


def test_durations_weigh_files_and_all_zero_durations_fall_back_to_counts() -> None:
    ids = ["a.py::x", "a.py::y", "b.py::z"]
    assert shard_plan.file_weights(ids, {"a.py::x": 1.5, "a.py::y": 0.5, "b.py::z": 3.0}) == {"a.py": 2.0, "b.py": 3.0}
    assert shard_plan.file_weights(ids, {"a.py::x": 0.0}) == {"a.py": 2, "b.py": 1}


def test_the_last_shard_runs_everything_the_others_do_not() -> None:
    job = TestJob(command=CMD, id="baseline", commit="c0ffee", log_name="baseline.log")
    first, second, rest = shards.shard_jobs(job, [["t/a.py"], ["t/b.py", "t/c.py"], ["t/d.py"]])
    assert (first.id, first.only, first.select, first.ignore, first.log_name) == (
        "baseline/shard-1",
        ["t/a.py"],
        None,
        [],
        "baseline.shard-1.log",
    )
    assert second.only == ["t/b.py", "t/c.py"]
    assert rest.select is None and rest.only is None and rest.ignore == ["t/a.py", "t/b.py", "t/c.py"]


def test_the_first_plan_weighs_the_tracked_test_files_on_disk_by_the_tests_they_define(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "tests/test_a.py": "def test_1():\n    pass\n\n\nasync def test_2():\n    pass\n\n\nclass TestC:\n    def test_3(self):\n        pass\n",
            "tests/b_test.py": "def helper():\n    pass\n",
            "tests/conftest.py": "def test_not_a_test_file():\n    pass\n",
            "tests/helpers.py": "def test_like():\n    pass\n",
            "calc.py": "def value():\n    return 1\n",
        },
    )
    (repo / "tests" / "test_untracked.py").write_text("def test_x():\n    pass\n")
    assert shards.disk_weights(repo) == {"tests/test_a.py": 3.0, "tests/b_test.py": 1.0}


PARAMETRISED = """\
import pytest

CASES = [1, 2, 3, 4, 5]


@pytest.mark.parametrize("x", [1, 2, 3])
def test_three(x):
    pass


@pytest.mark.parametrize("x", [1, 2])
@pytest.mark.parametrize(argnames="y", argvalues=((1,), (2,)))
def test_four(x, y):
    pass


@pytest.mark.parametrize("x", CASES)
def test_named(x):
    pass


@pytest.mark.parametrize("x", tuple(CASES))
@pytest.mark.parametrize("y", [c * 2 for c in CASES[:2]])
def test_wrapped(x, y):
    pass


CASES = make_cases()


@pytest.mark.parametrize("x", CASES)
def test_not_literal(x):
    pass


@pytest.mark.parametrize("k", [1, 2])
class TestPair:
    def test_a(self, k):
        pass

    @pytest.mark.parametrize("j", [1, 2, 3])
    def test_b(self, k, j):
        pass

    def helper(self):
        pass


class Helpers:
    def test_method(self):
        pass
"""


def test_a_first_plan_counts_each_literal_parametrize_case_as_a_test() -> None:
    """humanize's test_number.py runs 311 tests from a few parametrised definitions: weighed by
    those, the first plan put it in one shard against 28 and 211 tests (issue 27). Literal lists
    count, stacked ones multiply, a class's multiply its methods'; so does a module-level name bound
    to a literal above the test, wrapped in tuple() or a comprehension over it (dateutil's
    test_easter.py: 163 tests, weighed 4 before, which put 649 tests in one baseline shard against
    1447); a name bound to anything else, or a slice, counts 1."""
    assert shard_plan.source_weight(PARAMETRISED.encode()) == 3 + 4 + 5 + 5 + 1 + 2 * (1 + 3) + 1
    assert shard_plan.source_weight(b"def test_x(:\n    pass\ndef test_y():\n    pass\n") == 2.0  # no parse: lines
    assert shard_plan.source_weight(b"") == 1.0


def test_shards_never_outnumber_the_local_cores() -> None:
    cores = len(os.sched_getaffinity(0))
    many = LocalExecutor(pool=None, tracker=procs.ProcessTracker(), parallel=cores + 5)  # type: ignore[arg-type]
    one = LocalExecutor(pool=None, tracker=procs.ProcessTracker(), parallel=1)  # type: ignore[arg-type]
    assert shards.usable_slots(many) == cores and shards.usable_slots(one) == 1


def _part(
    job_id: str, status: JobStatus, outcomes: dict[str, str], code: int | None, infra: str | None = None
) -> JobResult:
    run = TestRun(
        outcomes={i: TestOutcome(id=i, outcome=o) for i, o in outcomes.items()}, exit_code=code, infra_error=infra
    )
    return JobResult(
        job_id=job_id, status=status, run=run, reason=None if status == JobStatus.ok else f"{job_id}: it {status.value}"
    )


def test_merge_unions_outcomes_and_an_empty_rest_shard_is_not_an_error(tmp_path: Path) -> None:
    job = TestJob(command=CMD, id="full", commit="c")
    merged = shards.merge(
        job,
        [
            _part("full/shard-1", JobStatus.ok, {"a.py::x": "passed"}, 0),
            _part("full/shard-2", JobStatus.ok, {"b.py::y": "failed"}, 1),
            _part("full/shard-3", JobStatus.ok, {}, 5, "no tests collected"),
        ],
        tmp_path / "full.log",
    )
    assert merged.status == JobStatus.ok and merged.run.infra_error is None
    assert merged.run.exit_code == 1 and sorted(merged.run.outcomes) == ["a.py::x", "b.py::y"]
    assert "===== full/shard-2 (ok" in (tmp_path / "full.log").read_text()


def test_a_crashed_or_overrun_shard_is_reported_never_dropped(tmp_path: Path) -> None:
    job = TestJob(command=CMD, id="full", commit="c")
    merged = shards.merge(
        job,
        [
            _part("full/shard-1", JobStatus.ok, {"a.py::x": "passed"}, 0),
            _part("full/shard-2", JobStatus.timeout, {}, None),
            _part("full/shard-3", JobStatus.crashed, {}, None),
        ],
        tmp_path / "full.log",
    )
    assert merged.status == JobStatus.crashed
    assert merged.reason == "full/shard-2: it timeout; full/shard-3: it crashed"
    assert merged.run.exit_code is None
    infra = shards.merge(
        job, [_part("full/shard-1", JobStatus.ok, {}, 2, "collection errors in t/b.py")], tmp_path / "f.log"
    )
    assert infra.run.infra_error == "full/shard-1: collection errors in t/b.py"


def _executor(repo: Path, tmp_path: Path, parallel: int) -> tuple[LocalExecutor, WorktreePool]:
    pool = WorktreePool(git.Repo(repo), repo, tmp_path / "worktrees" / "run")
    return LocalExecutor(pool=pool, tracker=procs.ProcessTracker(), parallel=parallel), pool


def _per_test(run: TestRun) -> dict[str, str]:
    return {i: o.outcome for i, o in run.outcomes.items()}


@pytest.mark.anyio
@pytest.mark.timeout(1200)
async def test_sharding_gives_the_unsharded_per_test_results_on_corpus_cases(tmp_path: Path) -> None:
    """Each corpus case has one test file: it is split into that file and the rest shard, which
    must find nothing more — the merge of the two is the unsharded run, test by test. Every fourth
    case in name order (16 of 62): all 62 took 100 s of CI's 20 minutes."""
    cases = sorted(p for p in CASES.iterdir() if (p / "project").is_dir())[::4]
    assert len(cases) >= 10
    compared: dict[str, tuple[JobResult, JobResult]] = {}

    async def one(case: Path) -> None:
        repo = tmp_path / case.name
        shutil.copytree(case / "project", repo)
        make_repo(repo, {})
        commit = git.Repo(repo).head.commit.hexsha
        executor, pool = _executor(repo, tmp_path / case.name, 2)
        try:
            whole = await executor.run(
                TestJob(command=CMD, id="whole", commit=commit, workdir=repo), tmp_path / "logs" / case.name
            )
            groups = [sorted({f for f in map(shard_plan.file_of, whole.run.outcomes) if f}), []]
            split = await shards.run_sharded(
                executor,
                TestJob(command=CMD, id="split", commit=commit, log_name="split.log", workdir=repo),
                groups,
                tmp_path / "logs" / case.name,
            )
        finally:
            pool.remove_all()
        compared[case.name] = whole, split

    limiter = anyio.CapacityLimiter(4)

    async def limited(case: Path) -> None:
        async with limiter:
            await one(case)

    async with anyio.create_task_group() as group:
        for case in cases:
            group.start_soon(limited, case)
    for name, (whole, split) in sorted(compared.items()):
        assert whole.status == split.status == JobStatus.ok, (name, split.reason)
        assert whole.run.outcomes and _per_test(split.run) == _per_test(whole.run), name
        assert split.run.exit_code == whole.run.exit_code and split.run.infra_error is None, name
    assert len(compared) == len(cases)


MULTI = {
    **{
        f"tests/test_m{k}.py": "".join(f"def test_{k}_{i}():\n    assert {i} % 3 != {k % 3}\n\n" for i in range(k + 1))
        for k in range(5)
    },
    "tests/test_broken_import.py": "import not_a_module_anywhere\n\ndef test_never():\n    pass\n",
}


@pytest.mark.anyio
async def test_a_planned_multi_file_suite_matches_its_unsharded_run_and_keeps_collection_errors(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", MULTI)
    commit = git.Repo(repo).head.commit.hexsha
    executor, pool = _executor(repo, tmp_path, 3)
    try:
        whole = await executor.run(TestJob(command=CMD, id="whole", commit=commit), tmp_path / "logs")
        groups = shard_plan.plan(shards.disk_weights(repo), 3)
        assert len(groups) == 3
        split = await shards.run_sharded(
            executor, TestJob(command=CMD, id="split", commit=commit, log_name="split.log"), groups, tmp_path / "logs"
        )
    finally:
        pool.remove_all()
    assert _per_test(split.run) == _per_test(whole.run) == {}  # pytest stops at a collection error
    assert whole.run.collection_errors == ["tests/test_broken_import.py"]
    assert split.run.collection_errors == whole.run.collection_errors
    assert split.run.infra_error and "collection errors in tests/test_broken_import.py" in split.run.infra_error
    (repo / "tests" / "test_broken_import.py").unlink()
    git.Repo(repo).git.commit(
        "-qam",
        "drop it",
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@x",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@x",
        },
    )
    commit = git.Repo(repo).head.commit.hexsha
    try:
        whole = await executor.run(TestJob(command=CMD, id="whole2", commit=commit), tmp_path / "logs")
        split = await shards.run_sharded(
            executor, TestJob(command=CMD, id="split2", commit=commit, log_name="split2.log"), groups, tmp_path / "logs"
        )
    finally:
        pool.remove_all()
    assert len(whole.run.outcomes) == 15 and whole.run.infra_error is None
    assert _per_test(split.run) == _per_test(whole.run) and split.run.exit_code == whole.run.exit_code == 1


@pytest.mark.anyio
async def test_an_overrunning_shard_makes_the_job_timeout_and_names_the_shard(tmp_path: Path) -> None:
    files = {
        "tests/test_fast.py": "def test_fast():\n    pass\n",
        "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(600)\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    commit = git.Repo(repo).head.commit.hexsha
    executor, pool = _executor(repo, tmp_path, 2)
    try:
        job = TestJob(command=CMD, id="full", commit=commit, timeout_s=15.0)
        merged = await shards.run_sharded(
            executor, job, [["tests/test_slow.py"], ["tests/test_fast.py"]], tmp_path / "logs"
        )
    finally:
        pool.remove_all()
    assert merged.status == JobStatus.timeout and merged.executor == ExecutorName.local
    assert merged.reason and merged.reason.startswith("full/shard-1: the test run exceeded its 15s limit")
    assert _per_test(merged.run) == {"tests/test_fast.py::test_fast": "passed"}
    assert not executor.tracker.pids


@pytest.mark.anyio
async def test_a_shard_collects_only_what_an_unsharded_run_collects(tmp_path: Path) -> None:
    """pytest's own collection rules (testpaths here) still apply to a shard's files: a test file
    on disk that the unsharded run never collects is not run by a shard either."""
    files = {
        "pyproject.toml": f'[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n[tool.explore]\npython = "{PY}"\n',
        "tests/test_one.py": "def test_one():\n    pass\n",
        "tests/test_two.py": "def test_two():\n    assert False\n",
        "examples/test_demo.py": "def test_demo():\n    assert False, 'never collected'\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    commit = git.Repo(repo).head.commit.hexsha
    executor, pool = _executor(repo, tmp_path, 3)
    try:
        assert sorted(shards.disk_weights(repo)) == ["tests/test_one.py", "tests/test_two.py"]  # the plan knows
        groups = shard_plan.plan({**shards.disk_weights(repo), "examples/test_demo.py": 1.0}, 3)  # a shard is told
        assert sorted(f for g in groups for f in g) == [
            "examples/test_demo.py",
            "tests/test_one.py",
            "tests/test_two.py",
        ]
        whole = await executor.run(TestJob(command=CMD, id="whole", commit=commit), tmp_path / "logs")
        split = await shards.run_sharded(
            executor, TestJob(command=CMD, id="split", commit=commit, log_name="split.log"), groups, tmp_path / "logs"
        )
    finally:
        pool.remove_all()
    assert _per_test(whole.run) == {"tests/test_one.py::test_one": "passed", "tests/test_two.py::test_two": "failed"}
    assert _per_test(split.run) == _per_test(whole.run)
    assert (
        split.status == JobStatus.ok
        and split.run.exit_code == whole.run.exit_code == 1
        and split.run.infra_error is None
    )


SHARDED_BUG = {
    "calc.py": "def area(w, h):\n    return w + h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n",
    "tests/test_area.py": "from calc import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n\n\ndef test_square():\n    assert area(4, 4) == 16\n",
    "tests/test_perimeter.py": "from calc import perimeter\n\n\ndef test_perimeter():\n    assert perimeter(2, 3) == 10\n",
}


def test_a_sharded_baseline_carries_mutates_coverage_one_part_per_shard(tmp_path: Path) -> None:
    """mutate's per-test coverage rides along a sharded baseline: each shard, in its own worktree,
    writes its part, and the first iteration reads them merged instead of running the suite again."""
    repo = make_repo(tmp_path / "repo", SHARDED_BUG)
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--parallel", "2", "--shards", "2", "--json"])
    assert code == 0, err
    assert summary is not None and summary["status"] == "succeeded" and "return w * h" in (repo / "calc.py").read_text()
    assert "baseline: the suite split into 2 shards" in err
    run_dir = repo / ".explore" / "runs" / summary["run_id"]
    parts = sorted(p.name for p in (run_dir / "mutate-baseline").glob("coverage-run*.json"))
    assert parts == ["coverage-run.shard-1.json", "coverage-run.shard-2.json"]
    assert not (run_dir / "iteration-1" / "mutate" / "coverage.log").exists()  # no second suite run for coverage
    assert summary["iterations"][0]["timing"]["coverage"] < 0.5
    assert_no_debris(repo)


def test_the_parts_of_a_sharded_baseline_merge_only_when_every_shard_measured(tmp_path: Path) -> None:
    result = tmp_path / "coverage-run.json"

    def part(k: int, n: int, contexts: dict[str, list[str]], status: str = "ok") -> None:
        data = {
            "status": status,
            "shard": f"{k}/{n}",
            "overridden": [f"opt{k}"],
            "trace": {"files": {"calc.py": {"contexts": contexts}}},
        }
        (tmp_path / f"coverage-run.shard-{k}.json").write_text(json.dumps(data))

    part(1, 2, {"1": [""], "2": ["t/a.py::x"]})
    assert load_result(result) == {}  # shard 2 of 2 missing: nothing measured, mutate runs its own
    part(2, 2, {"1": [""], "2": ["t/b.py::y"], "5": ["t/b.py::y"]})
    merged = load_result(result)
    assert merged["status"] == "ok" and merged["overridden"] == ["opt1", "opt2"]
    assert merged["trace"]["files"]["calc.py"]["contexts"] == {
        "1": [""],
        "2": ["t/a.py::x", "t/b.py::y"],
        "5": ["t/b.py::y"],
    }
    part(2, 2, {}, status="skipped")
    assert load_result(result) == {}
    part(2, 3, {"2": ["t/b.py::y"]})
    assert load_result(result) == {}  # parts of different plans
    result.write_text(json.dumps({"status": "ok", "trace": {"files": {}}}))
    assert load_result(result) == {"status": "ok", "trace": {"files": {}}}  # an unsharded result wins


def test_a_commands_pythonpath_comes_after_the_worktrees_own(tmp_path: Path) -> None:
    env = with_isolation(tmp_path, {"PYTHONPATH": "/plugin", "X": "1"})
    assert (
        env["PYTHONPATH"].split(":")[0] == str(tmp_path) and env["PYTHONPATH"].endswith("/plugin") and env["X"] == "1"
    )


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="shards need two cores")
def test_the_first_baseline_is_planned_from_the_durations_the_last_one_recorded(tmp_path: Path) -> None:
    """Two test files of a few ms each: counted, not worth a second process. Recorded as taking
    5 s each by the last baseline (`.explore/durations.json`), they are split in two; the run then
    records what it measured, and the next run keeps them whole."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_a.py": "from calc import add\n\n\ndef test_a():\n    assert add(1, 2) == 3\n",
            "tests/test_b.py": "from calc import add\n\n\ndef test_b():\n    assert add(2, 2) == 4\n",
        },
    )
    recorded = repo / ".explore" / durations.FILE
    recorded.parent.mkdir(exist_ok=True)
    recorded.write_text(json.dumps({"files": {"tests/test_a.py": 5.0, "tests/test_b.py": 5.0}, "overhead_s": 0.2}))
    args = ["run", str(repo), "--agent-cmd", "true", "--parallel", "2", "--json"]
    code, summary, err = run_cli(args)
    assert code == 0 and summary["status"] == "succeeded", err
    assert "baseline: the suite split into 2 shards" in err
    measured = durations.read(recorded)
    assert measured is not None and sorted(measured.files) == ["tests/test_a.py", "tests/test_b.py"]
    assert all(0 < s < 1 for s in measured.files.values()) and measured.overhead_s > 0
    code, summary, err = run_cli(args)
    assert code == 0 and "split into" not in err, err
    assert_no_debris(repo)


def test_the_first_plan_collects_what_pytest_collects_testpaths_norecursedirs_python_files(tmp_path: Path) -> None:
    """networkx's `testpaths` keeps 78 of its 258 tracked test files: a first plan that weighed them
    all gave one shard half the suite's time idle. Both kinds of configuration file, and pytest's
    order between them (pytest.ini first, even empty; pyproject only with its pytest table)."""
    test = "def test_1():\n    pass\n"
    files = {
        "pkg/tests/test_a.py": test,
        "pkg/tests/deep/test_b.py": test,
        "pkg/tests/fixtures/test_data.py": test,  # norecursedirs
        "pkg/tests/check_c.py": test,  # python_files
        "tools/test_tool.py": test,  # outside testpaths
        "doc/test_doc.py": test,  # outside testpaths
        "pkg/.hidden/test_h.py": test,  # not under testpaths either
        "setup.cfg": "[tool:pytest]\ntestpaths = pkg\nnorecursedirs = fixtures .*\npython_files = test_*.py check_*.py\n",
        "pyproject.toml": f'[tool.explore]\npython = "{PY}"\n',
    }
    repo = make_repo(tmp_path / "repo", files)
    assert sorted(shards.disk_weights(repo)) == [
        "pkg/tests/check_c.py",
        "pkg/tests/deep/test_b.py",
        "pkg/tests/test_a.py",
    ]
    # pyproject.toml comes before setup.cfg when it has the pytest table
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tools", "doc/*.py"]\n')
    assert sorted(shards.disk_weights(repo)) == ["doc/test_doc.py", "tools/test_tool.py"]
    # an empty pytest.ini wins over both: pytest's defaults (from the root; `.*` not recursed)
    (repo / "pytest.ini").write_text("")
    assert sorted(shards.disk_weights(repo)) == [
        "doc/test_doc.py",
        "pkg/tests/deep/test_b.py",
        "pkg/tests/fixtures/test_data.py",
        "pkg/tests/test_a.py",
        "tools/test_tool.py",
    ]


def test_collect_rules_read_pytest_configuration_as_pytest_does() -> None:
    rules = shard_plan.collect_rules({"tox.ini": "[pytest]\ntestpaths =\n    a\n    b/c\nnorecursedirs = x\n"})
    assert rules == shard_plan.CollectRules(testpaths=("a", "b/c"), norecursedirs=("x",))
    assert shard_plan.collect_rules({"pyproject.toml": "[tool.black]\n", "setup.cfg": "[metadata]\n"}) == (
        shard_plan.CollectRules()
    )
    assert shard_plan.collects("a/test_x.py", rules) and shard_plan.collects("b/c/d/test_x.py", rules)
    assert not shard_plan.collects("b/test_x.py", rules) and not shard_plan.collects("a/x/test_y.py", rules)
    assert shard_plan.collects("a/build/test_x.py", rules)  # its own norecursedirs replace the defaults
    assert not shard_plan.collects("a/build/test_x.py", shard_plan.CollectRules(testpaths=("a",)))
    assert shard_plan.collects("a/x_test.py") and not shard_plan.collects("a/helper.py")
    # a testpath naming a file collects it whatever its name
    assert shard_plan.collects("a/check.py", shard_plan.CollectRules(testpaths=("a/check.py",)))
