"""Issue 27, point 5: explore's own start-up and end, against `python -c "import pytest"` measured in
the same run.

Two measures, for each explore named (--explore, one or more; default the one beside this
interpreter), interleaved round by round with the reference process so the machine's load drifts
over all alike:

  start     `explore run --json EMPTY-FOLDER`: explore's imports, its refusal (no repository) and its
            exit — the fixed cost every run pays before it can do anything; wall and CPU seconds,
            --rounds times (cheap: many rounds);
  run       `explore run --agent mutate --parallel 3 --json --verbose` on one repository (explore's
            demo project, or --repo with its --python, or --case), --runs times, with its marks
            from launch: first (explore's first line on stderr), baseline (its "baseline: running"
            line), end (the JSON summary on stdout), exit (the process gone; `exit - end` is what it
            spends after its last word), cpu (user + sys of explore and every process it waited for).

The reference is `python -c "import pytest"` with the interpreter the tests run with (the least a
test process costs), its wall and CPU measured in the same rounds; each figure is also given over it
(median over the rounds).

Each explore's bytecode is reported too: with PYTHONDONTWRITEBYTECODE=1 (set in this project's
shared environment) an editable install never caches it, and every start compiles explore's ~100
modules (about 0.13 s of CPU here) — a pip install has it compiled once.

Run: python benchmarks/startup.py [--explore A/bin/explore B/bin/explore] [--rounds 20] [--runs 3]
     [--repo PATH --python PY | --case NAME (a built realworld case: its repo and venv)]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MARKS = ("first", "baseline", "end", "exit", "cpu")


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Run argv; the seconds from launch to each mark, and its CPU seconds (its own and its children's)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    found: dict[str, float] = {}

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            now = time.perf_counter() - start
            found.setdefault("first", now)
            if b"baseline: running" in line:
                found.setdefault("baseline", now)

    reader = threading.Thread(target=read_stderr)
    reader.start()
    first = proc.stdout.read(1)
    if first:
        found["end"] = time.perf_counter() - start
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    found["exit"] = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    found["cpu"] = usage.ru_utime + usage.ru_stime
    found["rc"] = proc.returncode
    return found


def make_demo(folder: Path) -> Path:
    from explore.cli.demo import create_demo

    return create_demo(folder)


def bytecode_cached(explore: str) -> str:
    """Whether the explore script's interpreter finds explore's own modules compiled."""
    with open(explore, encoding="utf-8") as handle:
        python = handle.readline().removeprefix("#!").strip()
    code = (
        "import importlib.util, os, explore.cli.session as m; "
        "print('yes' if os.path.exists(importlib.util.cache_from_source(m.__file__)) else 'no')"
    )
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def default_explore() -> str:
    beside = Path(sys.executable).parent / "explore"
    return str(beside) if beside.exists() else (shutil.which("explore") or "explore")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--explore", nargs="+", default=[default_explore()])
    parser.add_argument("--rounds", type=int, default=20, help="Start-ups per explore (default 20).")
    parser.add_argument("--runs", type=int, default=3, help="Whole runs per explore (default 3; 0: none).")
    parser.add_argument("--repo", type=Path, help="A git repository with failing tests (default: the demo project).")
    parser.add_argument("--python", default=sys.executable, help="The interpreter the tests run with.")
    parser.add_argument("--case", help="A built realworld case (benchmarks/realworld/build.py): its repo and venv.")
    args = parser.parse_args()
    if args.case:
        sys.path.insert(0, str(Path(__file__).resolve().parent / "realworld"))
        from build import DEFAULT_CACHE

        case = DEFAULT_CACHE / "cases" / args.case
        args.repo, args.python = case / "repo", json.loads((case / "case.json").read_text())["python"]
    scratch = Path(tempfile.mkdtemp(prefix="explore-startup-"))
    try:
        template = args.repo.resolve() if args.repo else make_demo(scratch / "template")
        env = {**os.environ, "VIRTUAL_ENV": str(Path(args.python).parent.parent)}
        empty = scratch / "empty"
        empty.mkdir()
        reference: list[dict[str, float]] = []
        starts: dict[str, list[dict[str, float]]] = {e: [] for e in args.explore}
        runs: dict[str, list[dict[str, float]]] = {e: [] for e in args.explore}
        for n in range(max(args.rounds, args.runs)):
            if n < args.rounds:
                reference.append(timed([args.python, "-c", "import pytest"], scratch, env))
                for explore in args.explore:
                    starts[explore].append(timed([explore, "run", "--json", str(empty)], scratch, env))
            if n < args.runs:
                for explore in args.explore:
                    repo = scratch / f"run-{n}-{args.explore.index(explore)}"
                    shutil.copytree(template, repo, symlinks=True)
                    argv = [explore, "run", "--agent", "mutate", "--parallel", "3", "--json", "--verbose"]
                    found = timed([*argv, "--python", args.python, "."], repo, env)
                    runs[explore].append(found)
                    shutil.rmtree(repo, ignore_errors=True)
                    print(
                        f"run {n + 1} {explore}: "
                        + " ".join(f"{m} {found.get(m, float('nan')):.3f}" for m in MARKS)
                        + f" rc {found['rc']:.0f}",
                        file=sys.stderr,
                    )
        ref_wall = statistics.median(f["exit"] for f in reference)
        ref_cpu = statistics.median(f["cpu"] for f in reference)
        print(
            f'reference: python -c "import pytest" wall {ref_wall:.3f}s, CPU {ref_cpu:.3f}s '
            f"(medians of {len(reference)}); load now {os.getloadavg()[0]:.2f}"
        )
        print(f"{'start (no repository)':<48} {'wall':>16} {'cpu':>16}")
        for explore, found in starts.items():
            wall, cpu = statistics.median(f["exit"] for f in found), statistics.median(f["cpu"] for f in found)
            print(f"{explore[-48:]:<48} {wall:6.3f}s ({wall / ref_wall:4.1f}x) {cpu:6.3f}s ({cpu / ref_cpu:4.1f}x)")
        if args.runs:
            print(f"{'run':<48} " + " ".join(f"{m:>16}" for m in (*MARKS, "exit - end")))
        for explore, found in runs.items() if args.runs else ():
            cells = []
            for mark in (*MARKS, "tail"):
                values = [
                    (f["exit"] - f["end"]) if mark == "tail" else f[mark] for f in found if mark in f or "end" in f
                ]
                median = statistics.median(values) if values else float("nan")
                cells.append(f"{median:6.3f}s ({median / (ref_cpu if mark == 'cpu' else ref_wall):4.1f}x)")
            print(f"{explore[-48:]:<48} " + " ".join(f"{c:>16}" for c in cells))
        for explore in args.explore:
            print(f"{explore}: its own modules have bytecode: {bytecode_cached(explore)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
