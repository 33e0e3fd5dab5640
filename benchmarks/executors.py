"""Issue 15's acceptance benchmark: what sharding and the executors buy and cost.

(a) Baseline wall time of a sleep-bound suite of 40 tests in 8 files (each test sleeps --sleep
    seconds), `explore run --shards 4` over `--shards 1`, both with --parallel 4. The suite is
    green, so a run is its baseline (planned from the test files on disk) and nothing else; the
    figure is the baseline phase read from the progress lines, plus the whole wall.
(b) End to end, `--parallel 3` over `--parallel 1` on parallel_speedup.py's scripted three-edit
    repo, with the slow test's sleep spread over 3 test files (one file cannot be sharded:
    sharding splits by file); sharding at its default (the free slots).
(b') A second, clearly separate workload: the same repo and edits with a longer suite (12 s of
    sleep over 6 test files). (b)'s suite is 2.5 s: there a test process's start costs as much
    as the tests it would share, so neither sharding nor the fan-out can pay off on 2 cores.
(c) Per-candidate overhead of `--executor ray` over `local` on a generated 5,000-file repo: one
    candidate's test job (its patch, a one-test suite) through each executor's API. Local runs
    in the candidate's worktree (made when the generator ran); Ray checks out the one-commit
    bundle on a worker and applies the patch. The bundle is made and put once per iteration:
    its cost is spread over the --parallel 3 candidates.

Run: .venv/bin/python benchmarks/executors.py [--sleep S] [--files N] [--skip a,b,c]
Targets (issue 15): (a) >= 3; (b) >= 2.5; (c) <= 1 s.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import parallel_speedup

SHARD_TARGET, PARALLEL_TARGET, OVERHEAD_TARGET_S = 3.0, 2.5, 1.0
LINE = re.compile(r"^\s*(\d+\.\d)s (.*)$")


def verdict(value: float, target: float, at_least: bool = True) -> str:
    met = value >= target if at_least else value <= target
    return f"target {'>=' if at_least else '<='} {target:g}: {'met' if met else 'NOT met'}"


def make_suite(root: Path, sleep_s: float) -> None:
    root.mkdir(parents=True)
    for f in range(8):
        body = "import time\n\n" + "".join(f"\ndef test_{f}_{t}():\n    time.sleep({sleep_s})\n" for t in range(5))
        (root / "tests").mkdir(exist_ok=True)
        (root / "tests" / f"test_part{f}.py").write_text(body)
    (root / "pyproject.toml").write_text(f'[tool.explore]\npython = "{sys.executable}"\n')
    (root / ".gitignore").write_text("__pycache__/\n")
    parallel_speedup.init_repo(root)


def baseline_run(project: Path, shards: int) -> tuple[float, float]:
    argv = [sys.executable, "-m", "explore", "run", str(project), "--parallel", "4", "--shards", str(shards), "--json"]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"explore run --shards {shards} exited {done.returncode}:\n{done.stderr[-3000:]}")
    begin = end = None
    for raw in done.stderr.splitlines():
        match = LINE.match(raw)
        if match and match.group(2).startswith("baseline: running"):
            begin = float(match.group(1))
        elif match and match.group(2).startswith("baseline:") and begin is not None:
            end = float(match.group(1))
    if begin is None or end is None:
        raise SystemExit(f"no baseline lines in the progress of --shards {shards}:\n{done.stderr[-2000:]}")
    return end - begin, wall


def sharding(tmp: Path, sleep_s: float) -> list[tuple[str, str, str]]:
    template = tmp / "suite"
    make_suite(template, sleep_s)
    figures = {}
    for shards in (1, 4):
        copy = tmp / f"suite-{shards}"
        shutil.copytree(template, copy, symlinks=True)
        figures[shards] = baseline_run(copy, shards)
        shutil.rmtree(copy, ignore_errors=True)
    ratio = figures[1][0] / figures[4][0]
    return [
        (f"suite: 40 tests in 8 files, each sleeping {sleep_s:g} s", f"{40 * sleep_s:.1f} s of sleep", ""),
        ("baseline --shards 1 (phase / whole run)", f"{figures[1][0]:.1f} / {figures[1][1]:.1f} s", ""),
        ("baseline --shards 4 (phase / whole run)", f"{figures[4][0]:.1f} / {figures[4][1]:.1f} s", ""),
        ("ratio of the baseline phases, --shards 1 / --shards 4", f"{ratio:.2f}", verdict(ratio, SHARD_TARGET)),
        ("ratio of the whole runs", f"{figures[1][1] / figures[4][1]:.2f}", ""),
    ]


def overhead(tmp: Path, files: int, rounds: int = 5) -> list[tuple[str, str, str]]:
    import anyio
    import git

    from explore.edges import procs
    from explore.edges.testing import TestCommand
    from explore.edges.worktrees import WorktreePool
    from explore.executors.bundle import make_bundle
    from explore.executors.jobs import JobStatus, TestJob
    from explore.executors.local import LocalExecutor
    from explore.executors.ray import RayExecutor

    big = tmp / "big"
    parallel_speedup.make_big_repo(big, files - 1)
    (big / "test_big.py").write_text(
        "from pkg.m007 import mod00700\n\n\ndef test_f():\n    assert mod00700.f1(1) == 2\n"
    )
    (big / "pkg" / "__init__.py").write_text("")
    (big / "pkg" / "m007" / "__init__.py").write_text("")
    parallel_speedup.git(big, "add", "-A")
    parallel_speedup.git(big, "commit", "-q", "-m", "a test")
    repo = git.Repo(big)
    commit = repo.head.commit.hexsha
    tracked = len(repo.git.ls_files().splitlines())
    patch = '--- a/pkg/m007/mod00700.py\n+++ b/pkg/m007/mod00700.py\n@@ -1,2 +1,3 @@\n """Module 700."""\n+# a candidate\'s edit\n \n'
    command = TestCommand(python=sys.executable)
    pool = WorktreePool(repo, big, tmp / "worktrees" / "bench")
    local = LocalExecutor(pool=pool, tracker=procs.ProcessTracker(), parallel=1)
    path, _ = pool.acquire("a", commit)
    subprocess.run(["git", "apply", "-"], cwd=path, input=patch.encode(), check=True)

    async def timed(executor, job: TestJob) -> float:
        started = time.perf_counter()
        result = await executor.run(job, tmp / "logs")
        assert result.status == JobStatus.ok and result.run.exit_code == 0, (result.reason, result.log[-500:])
        return time.perf_counter() - started

    started = time.perf_counter()
    bundle = make_bundle(big, commit)
    bundle_s = time.perf_counter() - started

    async def measure() -> tuple[list[float], list[float], float]:
        ray_executor = await anyio.to_thread.run_sync(lambda: RayExecutor.connect(big, "bench-overhead"))
        try:
            started = time.perf_counter()
            await ray_executor.prepare(commit)
            prepare_s = time.perf_counter() - started
            await timed(
                ray_executor, TestJob(command=command, id="warm", commit=commit, patch=patch)
            )  # a worker process started
            local_s, ray_s = [], []
            for n in range(rounds):
                local_s.append(
                    await timed(local, TestJob(command=command, id=f"l{n}", commit=commit, patch=patch, workdir=path))
                )
                ray_s.append(
                    await timed(ray_executor, TestJob(command=command, id=f"r{n}", commit=commit, patch=patch))
                )
            return local_s, ray_s, prepare_s
        finally:
            await ray_executor.close()

    try:
        local_s, ray_s, prepare_s = anyio.run(measure)
    finally:
        pool.remove_all()
        repo.close()
    per_candidate = statistics.median(ray_s) - statistics.median(local_s) + prepare_s / 3
    return [
        (
            f"repo: {tracked:,} tracked files; bundle size",
            f"{len(bundle) / 2**20:.1f} MiB",
            f"made in {bundle_s:.2f} s",
        ),
        ("prepare (bundle + ray.put), once per iteration", f"{prepare_s:.2f} s", ""),
        (f"candidate test job, local executor (median of {rounds})", f"{statistics.median(local_s):.2f} s", ""),
        (
            f"candidate test job, ray executor (median of {rounds})",
            f"{statistics.median(ray_s):.2f} s",
            "checkout + apply + run + cleanup",
        ),
        (
            "overhead per candidate: ray - local + prepare / 3",
            f"{per_candidate:.2f} s",
            verdict(per_candidate, OVERHEAD_TARGET_S, at_least=False),
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sleep", type=float, default=0.25, help="seconds each of the 40 tests of (a) sleeps")
    parser.add_argument("--speedup-sleep", type=float, default=2.5, help="seconds of sleep in (b)'s suite")
    parser.add_argument(
        "--long-sleep", type=float, default=12.0, help="seconds of sleep in (b')'s suite, over 6 test files"
    )
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--skip", default="", help="comma list of parts to skip: a,b,b',c")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="explore-bench-executors-")).resolve()
    os.environ["EXPLORE_WORKTREES_DIR"] = str(tmp / "worktrees")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local Ray for the benchmark: no token file in $HOME
    try:
        print(f"explore executors and sharding ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})")
        if "a" not in skip:
            print("\n(a) sharded baseline")
            print(parallel_speedup.table(sharding(tmp, args.sleep)))
        if "b" not in skip:
            print(f"\n(b) --parallel 3 over --parallel 1, {args.speedup_sleep:g} s of sleep in 3 test files")
            print(parallel_speedup.table(parallel_speedup.speedup(tmp, args.speedup_sleep, slow_files=3)))
        if "b'" not in skip:
            print(
                f"\n(b') second workload, not the issue's: --parallel 3 over --parallel 1, {args.long_sleep:g} s of sleep in 6 test files"
            )
            print(parallel_speedup.table(parallel_speedup.speedup(tmp / "long", args.long_sleep, slow_files=6)))
        if "c" not in skip:
            print(f"\n(c) per-candidate overhead of --executor ray over local, {args.files:,}-file repo")
            print(parallel_speedup.table(overhead(tmp, args.files)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
