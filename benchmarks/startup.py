"""Issue 27, point 5: explore's own start-up and end, against `python -c "import pytest"` measured in
the same run.

One repository (explore's demo project, or --repo with its --python) repaired by
`explore run --agent mutate --parallel 3 --json --verbose` for each explore named (--explore, one or
more; default the one beside this interpreter), interleaved round by round with the reference process
so the machine's load drifts over all alike. Per run, from launch:

  first      explore's first line on stderr (its imports, the options, the repository opened);
  baseline   its "baseline: running" line (the run's state, the sandbox probe, the kit built);
  end        the JSON summary on stdout (the run is over);
  exit       the process gone: `exit - end` is what the process spends after its last word;
  cpu        user + sys seconds of explore and every process it waited for (os.wait4).

Each figure is also given over the reference's wall time (`python -c "import pytest"` with the
interpreter the tests run with: the least a test process costs), the median over the rounds.

Run: python benchmarks/startup.py [--explore A/bin/explore B/bin/explore] [--rounds 5]
     [--repo PATH --python PY]
"""

from __future__ import annotations

import argparse
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


def default_explore() -> str:
    beside = Path(sys.executable).parent / "explore"
    return str(beside) if beside.exists() else (shutil.which("explore") or "explore")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--explore", nargs="+", default=[default_explore()])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repo", type=Path, help="A git repository with failing tests (default: the demo project).")
    parser.add_argument("--python", default=sys.executable, help="The interpreter the tests run with.")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="explore-startup-"))
    try:
        template = args.repo.resolve() if args.repo else make_demo(scratch / "template")
        env = {**os.environ, "VIRTUAL_ENV": str(Path(args.python).parent.parent)}
        reference: list[float] = []
        runs: dict[str, list[dict[str, float]]] = {e: [] for e in args.explore}
        for n in range(args.rounds):
            start = time.perf_counter()
            subprocess.run([args.python, "-c", "import pytest"], check=True, env=env)
            reference.append(time.perf_counter() - start)
            for explore in args.explore:
                repo = scratch / f"run-{n}-{len(runs[explore])}-{abs(hash(explore))}"
                shutil.copytree(template, repo, symlinks=True)
                argv = [explore, "run", "--agent", "mutate", "--parallel", "3", "--json", "--verbose"]
                found = timed([*argv, "--python", args.python, "."], repo, env)
                runs[explore].append(found)
                shutil.rmtree(repo, ignore_errors=True)
                print(
                    f"round {n + 1} {explore}: "
                    + " ".join(f"{m} {found.get(m, float('nan')):.3f}" for m in MARKS)
                    + f" rc {found['rc']:.0f}",
                    file=sys.stderr,
                )
        ref = statistics.median(reference)
        load = os.getloadavg()
        print(f'reference: python -c "import pytest" {ref:.3f}s (median of {len(reference)}), load {load[0]:.2f}')
        print(f"{'explore':<48} " + " ".join(f"{m:>16}" for m in (*MARKS, "exit - end")))
        for explore, found in runs.items():
            cells = []
            for mark in (*MARKS, "tail"):
                values = [
                    (f["exit"] - f["end"]) if mark == "tail" else f[mark]
                    for f in found
                    if mark in f or (mark == "tail" and "end" in f)
                ]
                median = statistics.median(values) if values else float("nan")
                cells.append(f"{median:6.3f}s ({median / ref:4.1f}x)")
            print(f"{explore[-48:]:<48} " + " ".join(f"{c:>16}" for c in cells))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
