"""Issue 2's acceptance benchmark: what `--parallel 3` buys over `--parallel 1`, and what a
candidate costs beyond its own tests.

1. Speed-up. A generated git repo whose only real cost is sleep: its full suite takes ~3 s
   (one test sleeps; the rest are instant). One test fails at baseline. A scripted agent
   (`agent.py` in the repo, run through `--agent command`) picks its edit from
   $EXPLORE_CANDIDATE (+ $EXPLORE_ITERATION, see below):

     edit 0  fixes the failing test, breaks another  -> same pass rate, not merged
     edit 1  the same idea, spelt differently       -> same pass rate, not merged
     edit 2  the real fix                             -> green, merged, the run stops

   The three edits are distinct once normalised, so each is tested (no sharing), and each
   fixes the failing test, so each gets past the affected-tests stage into the full suite.
   `--parallel 3` explores the three as candidates a, b, c of iteration 1; `--parallel 1`
   explores one candidate per iteration (DESIGN: N = --parallel), so the same three edits
   arrive as candidate a of iterations 1, 2, 3 (edit index = candidate letter + iteration
   - 2). Same three test runs either way; the ratio of the two wall times is the speed-up.
   Both runs use fresh copies of one generated repo, in this one script run.

2. Overhead per candidate on a generated 5,000-file repo, through the WorktreePool API:
   fresh (acquire on a new pool = `git worktree add`, an edit, capture_patch, scoring,
   remove_all) and reuse (acquire on an existing slot = reset + clean, edit, capture_patch,
   scoring; the pool's removal amortised over the candidates).

Run: /work/venv/bin/python benchmarks/parallel_speedup.py [--sleep S] [--files N]
Targets (issue 2): ratio >= 2.5; overhead <= 0.5 s per candidate.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}
RATIO_TARGET = 2.5
OVERHEAD_TARGET_S = 0.5


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def init_repo(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")


# --------------------------------------------------------------------------- speed-up

AGENT = '''\
"""Scripted agent: the edit is chosen by candidate letter and iteration (see the benchmark)."""
import os
import pathlib
import sys

sys.stdin.read()
index = ord(os.environ["EXPLORE_CANDIDATE"]) - ord("a") + int(os.environ["EXPLORE_ITERATION"]) - 1
EDITS = [
    ("def value():\\n    return 2\\n", "def other():\\n    return 11\\n"),
    ("def value():\\n    return 1 + 1\\n", "def other():\\n    return 12\\n"),
    ("def value():\\n    return 2\\n", "def other():\\n    return 10\\n"),
]
value, other = EDITS[index]
pathlib.Path("calc.py").write_text(value + "\\n\\n" + other)
'''


def make_sleep_project(root: Path, sleep_s: float, slow_files: int = 1) -> None:
    """slow_files > 1 spreads the same sleep over that many test files (what sharding can split)."""
    root.mkdir(parents=True)
    (root / "calc.py").write_text("def value():\n    return 1\n\n\ndef other():\n    return 10\n")
    (root / "test_calc.py").write_text(
        textwrap.dedent("""\
        import time

        from calc import other, value


        def test_value():
            assert value() == 2


        def test_other():
            assert other() == 10
        """)
        + ("" if slow_files > 1 else f"\n\ndef test_slow():\n    time.sleep({sleep_s})\n")
    )
    if slow_files > 1:
        for k in range(slow_files):
            (root / f"test_slow_{k}.py").write_text(
                f"import time\n\n\ndef test_slow():\n    time.sleep({sleep_s / slow_files})\n"
            )
    (root / "agent.py").write_text(AGENT)
    (root / "pyproject.toml").write_text(f'[tool.explore]\npython = "{sys.executable}"\n')
    (root / ".gitignore").write_text("__pycache__/\n")
    init_repo(root)


def measure_candidate_tests(project: Path) -> tuple[float, float]:
    """What one candidate's tests cost, run by hand as the runner runs them: the failing test
    (affected), then the full suite."""
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    times = []
    for extra in (["test_calc.py::test_value"], []):
        started = time.perf_counter()
        subprocess.run(base + extra, cwd=project, capture_output=True)
        times.append(time.perf_counter() - started)
    return times[0], times[1]


def _concurrently(project: Path, selections: list[list[str]]) -> None:
    """One pytest process per selection, all at once, as explore starts them (json-report on)."""
    procs = []
    for n, selection in enumerate(selections):
        report = project / f".floor-{n}.json"
        argv = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            *selection,
            "--json-report",
            f"--json-report-file={report}",
            "--json-report-omit",
            "log",
            "streams",
            "warnings",
        ]
        procs.append(subprocess.Popen(argv, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for proc in procs:
        proc.wait()
    for n in range(len(selections)):
        (project / f".floor-{n}.json").unlink(missing_ok=True)


def floor(project: Path, sleep_s: float, slow_files: int) -> tuple[float, float]:
    """The test processes each run cannot do without, run by hand with nothing of explore around
    them (no explore start-up, agent, worktree, flaky rerun, git or merge), best of three:
    --parallel 1: the baseline (one process), the three candidates' affected tests one after the
    other, the winner's full suite (one process); --parallel 3: the baseline in 3 shards
    balanced by the known durations, the three candidates' affected tests at once, the winner's
    full suite in the same 3 shards. Their ratio is the most any runner could reach here."""
    from explore.decide.shard_plan import plan

    weights = {"test_calc.py": 0.01, **{f"test_slow_{k}.py": sleep_s / slow_files for k in range(slow_files)}}
    everything, shards, affected = [sorted(weights)], plan(weights, 3), [["test_calc.py"]]

    def timed(steps: list[list[list[str]]]) -> float:
        started = time.perf_counter()
        for step in steps:
            _concurrently(project, step)
        return time.perf_counter() - started

    one = min(timed([everything, affected, affected, affected, everything]) for _ in range(3))
    three = min(timed([shards, affected * 3, shards]) for _ in range(3))
    return one, three


LINE = re.compile(r"^\s*(\d+\.\d)s (.*)$")


def explore_run(project: Path, parallel: int) -> dict:
    agent_cmd = f"{sys.executable} agent.py"
    argv = [
        sys.executable,
        "-m",
        "explore",
        "run",
        str(project),
        "--parallel",
        str(parallel),
        "--agent",
        "command",
        "--agent-cmd",
        agent_cmd,
        "--branch-timeout",
        "120",
        "--json",
    ]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - started
    try:
        summary = json.loads(done.stdout)
    except ValueError as exc:
        raise SystemExit(
            f"explore run --parallel {parallel} printed no JSON (exit {done.returncode}):\n{done.stderr[-3000:]}"
        ) from exc
    # Phase times from the progress lines on stderr (elapsed seconds since the display started).
    iteration_start = finish = None
    started_stage: dict[str, tuple[str, float]] = {}
    stages: list[dict[str, float]] = []  # per candidate: wall seconds of its affected and full test runs
    current: dict[str, dict[str, float]] = {}
    for raw in done.stderr.splitlines():
        match = LINE.match(raw)
        if not match:
            continue
        elapsed, text = float(match.group(1)), match.group(2)
        if iteration_start is None and text.startswith("iteration 1:"):
            iteration_start = elapsed
        if text.startswith(("succeeded:", "failed:", "partial:", "escalated:")):
            finish = elapsed
        cand = re.match(r"^\s*\[(\w+)\] (.*)$", text)
        if cand:
            cid, what = cand.groups()
            if what.startswith("starting"):
                current[cid] = {}
            elif what.startswith(("affected tests", "full suite")):
                if cid in started_stage:
                    name, t = started_stage[cid]
                    current[cid][name] = elapsed - t
                started_stage[cid] = ("affected" if what.startswith("affected") else "full", elapsed)
            elif what.startswith(("ok", "rejected", "crashed", "timeout")) and cid in started_stage:
                name, t = started_stage.pop(cid)
                current[cid][name] = elapsed - t
                stages.append(current.pop(cid))
    # What the runner's affected-tests stage really selected, from its report files.
    selected = []
    for report in sorted(project.glob(".explore/runs/*/iteration-*/candidate-*/affected.report")):
        try:
            selected.append(len(json.loads(report.read_text())["tests"]))
        except (ValueError, KeyError):
            pass
    candidates = [c for it in summary.get("iterations", []) for c in it["candidates"]]
    return {
        "wall": wall,
        "exit": done.returncode,
        "status": summary.get("status"),
        "iterations": len(summary.get("iterations", [])),
        "candidates": candidates,
        "baseline_s": iteration_start,
        "iterations_s": (finish - iteration_start) if finish is not None and iteration_start is not None else None,
        "stages": stages,
        "affected_selected": selected,
        "stderr": done.stderr,
    }


def speedup(tmp: Path, sleep_s: float, slow_files: int = 1) -> list[tuple[str, str, str]]:
    template = tmp / "sleep-template"
    make_sleep_project(template, sleep_s, slow_files)
    affected_s, full_s = measure_candidate_tests(template)
    results, troubles = {}, []
    for parallel in (1, 3):
        for attempt in range(1, 3):
            copy = tmp / f"sleep-p{parallel}-{attempt}"
            shutil.copytree(template, copy, symlinks=True)
            r = explore_run(copy, parallel)
            shutil.rmtree(copy, ignore_errors=True)
            ids = [f"{c['id']}:{c['status']}" for c in r["candidates"]]
            print(
                f"  --parallel {parallel} (attempt {attempt}): exit {r['exit']} {r['status']}, "
                f"{r['iterations']} iteration(s), candidates {ids}",
                flush=True,
            )
            bad = [c for c in r["candidates"] if c["status"] != "ok"]
            for c in bad:
                reason = " ".join((c.get("reason") or "").split())
                troubles.append(
                    f"--parallel {parallel} attempt {attempt}: candidate {c['id']} {c['status']}: {reason[:400]}"
                )
            if r["status"] == "succeeded" and len(r["candidates"]) == 3 and not bad:
                results[parallel] = r
                break
        else:
            for line in troubles:
                print(f"  ! {line}")
            raise SystemExit(f"--parallel {parallel} did not run the three candidates to a green suite in 2 attempts")
    for line in troubles:
        print(f"  ! {line}")
    one, three = results[1], results[3]
    floor_one, floor_three = floor(template, sleep_s, slow_files) if slow_files > 1 else (float("nan"), float("nan"))

    def stage_mean(r: dict, name: str) -> float:
        values = [s[name] for s in r["stages"] if name in s]
        return statistics.mean(values) if values else float("nan")

    def tests_text(r: dict) -> str:
        a, f = stage_mean(r, "affected"), stage_mean(r, "full")
        return f"{a:.2f} + {f:.2f} = {a + f:.2f} s"

    ratio = one["wall"] / three["wall"]
    rows = [
        (
            "per-candidate tests by hand: affected (1 test) + full suite",
            f"{affected_s:.2f} + {full_s:.2f} = {affected_s + full_s:.2f} s",
            "",
        ),
        ("per-candidate tests in --parallel 1: affected + full", tests_text(one), ""),
        ("per-candidate tests in --parallel 3: affected + full", tests_text(three), ""),
        (
            "tests the runner's affected stage ran (of 3; 1 failing)",
            ", ".join(map(str, one["affected_selected"] + three["affected_selected"])),
            "",
        ),
        (
            "per-candidate duration_s (agent + tests), mean",
            f"p1 {statistics.mean(c['duration_s'] for c in one['candidates']):.2f} s, "
            f"p3 {statistics.mean(c['duration_s'] for c in three['candidates']):.2f} s",
            "",
        ),
        ("wall time explore run --parallel 1", f"{one['wall']:.2f} s", ""),
        ("wall time explore run --parallel 3", f"{three['wall']:.2f} s", ""),
        (
            "ratio --parallel 1 / --parallel 3 (end to end)",
            f"{ratio:.2f}",
            f"target >= {RATIO_TARGET}: {'met' if ratio >= RATIO_TARGET else 'NOT met'}",
        ),
    ]
    if (
        one["baseline_s"] is not None
        and three["baseline_s"] is not None
        and one["iterations_s"]
        and three["iterations_s"]
    ):
        phase_ratio = one["iterations_s"] / three["iterations_s"]
        # Amdahl: with an unsharded baseline and perfect fan-out the --parallel 3 run would
        # take baseline + one third of --parallel 1's iterations.
        ideal = one["wall"] / (one["wall"] - one["iterations_s"] * 2 / 3)
        rows += [
            (
                "  baseline phase (sharded with --parallel 3 where the runner shards it)",
                f"p1 {one['baseline_s']:.1f} s, p3 {three['baseline_s']:.1f} s",
                "",
            ),
            (
                "  iteration phase (propose, fan out, merge)",
                f"p1 {one['iterations_s']:.1f} s, p3 {three['iterations_s']:.1f} s",
                "",
            ),
            (
                "ratio of the iteration phases alone",
                f"{phase_ratio:.2f}",
                f"target >= {RATIO_TARGET}: {'met' if phase_ratio >= RATIO_TARGET else 'NOT met'}",
            ),
            ("best end-to-end ratio an unsharded baseline allows", f"{ideal:.2f}", "(perfect 3x fan-out)"),
        ]
    if slow_files > 1:
        ideal_ratio = round(floor_one / floor_three, 2)
        rows += [
            (
                "floor: the same test processes by hand, no explore (p1 / p3)",
                f"{floor_one:.2f} / {floor_three:.2f} s",
                "",
            ),
            (
                "ratio of the floors: the most any runner reaches here",
                f"{ideal_ratio:.2f}",
                f"target >= {RATIO_TARGET}: {'within reach' if ideal_ratio >= RATIO_TARGET else 'out of reach'}",
            ),
            (
                "explore over its floor (p1 / p3)",
                f"{one['wall'] / floor_one:.2f}x / {three['wall'] / floor_three:.2f}x",
                "",
            ),
        ]
    return rows


# --------------------------------------------------------------------------- overhead


def make_big_repo(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    body = "".join(f"def f{j}(x):\n    return x * {j} + {j}\n\n\n" for j in range(12))
    for i in range(files - 1):
        folder = root / "pkg" / f"m{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f'"""Module {i}."""\n\n' + body)
    (root / ".gitignore").write_text("__pycache__/\n")
    init_repo(root)


def fake_run(ids: list[str], failing: set[str]):
    from explore.model.testresults import TestOutcome, TestRun

    return TestRun(outcomes={i: TestOutcome(id=i, outcome="failed" if i in failing else "passed") for i in ids})


def score(patch_file: Path, files: list[str], worktree: Path, ids: list[str], baseline, candidate_run) -> None:
    """What the scheduler does with a candidate's patch and test run, minus the tests."""
    from explore.decide import scoring
    from explore.model.config import DEFAULT_TEST_PATTERNS

    patch = patch_file.read_text(encoding="utf-8")
    scoring.diff_size(patch)
    [f for f in files if scoring.is_test_file(f, DEFAULT_TEST_PATTERNS)]
    scoring.patch_key({f: (worktree / f).read_text(encoding="utf-8") for f in files})
    yard = scoring.yardstick_of(baseline)
    assert scoring.tamper_reason(files, candidate_run, yard, DEFAULT_TEST_PATTERNS, False) is None
    yard.counts(candidate_run)
    yard.failing(candidate_run)
    scoring.newly_failing(baseline.passing(), candidate_run)


def edit(worktree: Path, n: int) -> None:
    target = worktree / "pkg" / "m007" / "mod00700.py"
    target.write_text(target.read_text() + f"\n\ndef extra_{n}():\n    return {n}\n")
    (worktree / "pkg" / "m007" / "__pycache__").mkdir(exist_ok=True)  # ignored debris: never in the patch
    (worktree / "pkg" / "m007" / "__pycache__" / "mod00700.cpython-311.pyc").write_bytes(b"\0" * 4096)


def overhead(tmp: Path, files: int) -> list[tuple[str, str, str]]:
    import git as gitpython

    from explore.edges.worktrees import WorktreePool, default_root

    big = tmp / "big"
    make_big_repo(big, files)
    os.sync()  # the generator's writeback is not the worktrees' cost
    repo = gitpython.Repo(big)
    commit = repo.head.commit.hexsha
    ids = [f"tests/test_{i:04d}.py::test_{i}" for i in range(2000)]
    baseline = fake_run(ids, set(ids[:5]))
    candidate_run = fake_run(ids, set(ids[1:5]))
    pool_root = default_root(big.resolve())
    scratch = tmp / "patches"

    # Fresh: a worktree created for the candidate and removed after it.
    fresh = {"create": [], "patch": [], "score": [], "remove": []}
    for n, slot in enumerate("abc"):
        pool = WorktreePool(repo, big, pool_root / f"fresh-{slot}")
        t0 = time.perf_counter()
        path, created = pool.acquire(slot, commit)
        t1 = time.perf_counter()
        assert created
        edit(path, n)
        t2 = time.perf_counter()
        changed = pool.capture_patch(path, scratch / f"fresh-{slot}.diff")
        t3 = time.perf_counter()
        assert changed == ["pkg/m007/mod00700.py"], changed
        score(scratch / f"fresh-{slot}.diff", changed, path, ids, baseline, candidate_run)
        t4 = time.perf_counter()
        pool.remove_all()
        t5 = time.perf_counter()
        fresh["create"].append(t1 - t0)
        fresh["patch"].append(t3 - t2)
        fresh["score"].append(t4 - t3)
        fresh["remove"].append(t5 - t4)

    # Reuse: one pool, slots a b c created once, then acquired again (reset + clean) for
    # three more candidates each; removal at the end spread over all of them.
    pool = WorktreePool(repo, big, pool_root / "pooled")
    reuse = {"reset": [], "patch": [], "score": []}
    debris: list[bool] = []
    rounds = 3
    try:
        for slot in "abc":
            pool.acquire(slot, commit)
            edit(pool.path_for(slot), 99)
        for r in range(rounds):
            for n, slot in enumerate("abc"):
                t0 = time.perf_counter()
                path, created = pool.acquire(slot, commit)
                t1 = time.perf_counter()
                assert not created
                debris.append((path / "pkg" / "m007" / "__pycache__" / "mod00700.cpython-311.pyc").exists())
                assert "extra_" not in (path / "pkg" / "m007" / "mod00700.py").read_text()
                edit(path, 10 * r + n)
                t2 = time.perf_counter()
                changed = pool.capture_patch(path, scratch / f"pool-{slot}-{r}.diff")
                t3 = time.perf_counter()
                score(scratch / f"pool-{slot}-{r}.diff", changed, path, ids, baseline, candidate_run)
                t4 = time.perf_counter()
                reuse["reset"].append(t1 - t0)
                reuse["patch"].append(t3 - t2)
                reuse["score"].append(t4 - t3)
    finally:
        t0 = time.perf_counter()
        pool.remove_all()
        removal = time.perf_counter() - t0
    repo.close()

    def ms(values: list[float]) -> str:
        return f"{1000 * statistics.mean(values):.0f} ms"

    fresh_total = [sum(parts) for parts in zip(*fresh.values())]
    candidates_served = 3 * (rounds + 1)
    reuse_total = [sum(parts) + removal / candidates_served for parts in zip(*reuse.values())]
    verdict = lambda v: f"target <= {OVERHEAD_TARGET_S} s: {'met' if v <= OVERHEAD_TARGET_S else 'NOT met'}"  # noqa: E731
    return [
        (f"fresh worktree: create (worktree add, {files:,} files)", ms(fresh["create"]), ""),
        ("fresh worktree: capture_patch", ms(fresh["patch"]), ""),
        ("fresh worktree: scoring (2,000 test ids)", ms(fresh["score"]), ""),
        ("fresh worktree: remove (remove_all)", ms(fresh["remove"]), ""),
        (
            "overhead per candidate, fresh (mean / max)",
            f"{statistics.mean(fresh_total):.3f} / {max(fresh_total):.3f} s",
            verdict(max(fresh_total)),
        ),
        ("pool reuse: acquire = reset + clean", ms(reuse["reset"]), ""),
        ("pool reuse: capture_patch", ms(reuse["patch"]), ""),
        ("pool reuse: scoring", ms(reuse["score"]), ""),
        (
            f"pool removal at the end (3 worktrees) / {candidates_served} candidates",
            f"{removal:.2f} s / {candidates_served}",
            "",
        ),
        (
            "overhead per candidate, pool reuse (mean / max)",
            f"{statistics.mean(reuse_total):.3f} / {max(reuse_total):.3f} s",
            verdict(max(reuse_total)),
        ),
        (
            "ignored files (a .pyc) left by the previous candidate survive the reset",
            f"{sum(debris)}/{len(debris)}",
            "(acquire runs `clean -fd`, not `-fdx`)",
        ),
    ]


# --------------------------------------------------------------------------- main


def table(rows: list[tuple[str, str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    return "\n".join(f"  {a:<{width}}  {b:>{value_width}}  {c}".rstrip() for a, b, c in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sleep",
        type=float,
        default=2.5,
        help="seconds the slow test sleeps (default 2.5: ~3 s of tests per candidate)",
    )
    parser.add_argument("--files", type=int, default=5000, help="files in the generated repo for the overhead figures")
    parser.add_argument("--skip-speedup", action="store_true")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="explore-bench-speedup-")).resolve()
    previous = os.environ.get("EXPLORE_WORKTREES_DIR")
    os.environ["EXPLORE_WORKTREES_DIR"] = str(tmp / "worktrees")
    try:
        print(
            f"explore parallel speed-up and per-candidate overhead ({os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f}, git {git(tmp, '--version').split()[-1]})"
        )
        if not args.skip_speedup:
            print(f"\nspeed-up: 3 candidates, test suite sleeping {args.sleep:g} s, --agent command (scripted)")
            print(table(speedup(tmp, args.sleep)))
        print(f"\noverhead per candidate on a generated {args.files:,}-file repo (WorktreePool API)")
        print(table(overhead(tmp, args.files)))
        leftover = list((tmp / "worktrees").rglob(".git")) if (tmp / "worktrees").exists() else []
        if leftover:
            print(f"\nwarning: worktrees left behind: {leftover}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if previous is None:
            os.environ.pop("EXPLORE_WORKTREES_DIR", None)
        else:
            os.environ["EXPLORE_WORKTREES_DIR"] = previous


if __name__ == "__main__":
    sys.exit(main())
