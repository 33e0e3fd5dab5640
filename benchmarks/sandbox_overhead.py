"""Issue 23's benchmark: what the sandbox and the outside-write guard cost per candidate.

A generated git repo (`--files` Python files) and a linked worktree of it, as a run's pool has.
Three ways to start the same process in the worktree through `explore.procs.run`, interleaved
round by round so the machine's load drifts over all three alike:

  plain     no confinement (how explore ran every process before issue 23);
  marker    sandbox off: private TMPDIR/XDG_CACHE_HOME and the environment marker, plus the scan
            of every process's environment for daemons when the process ends;
  bwrap     sandbox on: the same inside bubblewrap (read-only root, the worktree writable,
            a PID namespace that dies with it).

The process is `python -c pass` (what every agent and test run starts with at least). A
candidate starts ~3 such processes (its agent, its affected tests, its full suite), so the
per-candidate sandbox overhead is 3 x (median bwrap - median plain). The guard (detection, on
in both modes) costs two fingerprints per candidate — the one before is shared by the fan-out,
so one per candidate is counted — measured here on the generated repo.

Run: /work/venv/bin/python benchmarks/sandbox_overhead.py [--files N] [--rounds N]
Target (issue 23): well under the 0.1 s per candidate the worktree pool costs.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from explore import guard, procs, sandbox

PROCESSES_PER_CANDIDATE = 3
TARGET_S = 0.1
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@localhost"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, check=True)


def make_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    for i in range(files):
        folder = repo / "pkg" / f"m{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f"def f(x):\n    return x * {i}\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    git(repo, "worktree", "add", "-q", "--detach", str(root / "pool" / "a"))
    return repo


def cpu() -> float:
    """CPU seconds of this process and of every child it has reaped (bwrap's own children included)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def timed(worktree: Path, confine: sandbox.Confinement | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process start to end."""
    started, used = time.perf_counter(), cpu()
    done = await procs.run([sys.executable, "-c", "pass"], worktree, confine=confine)
    if done.exit_code != 0:
        raise SystemExit(f"the process failed ({done.exit_code}): {done.output_tail}")
    return time.perf_counter() - started, cpu() - used


async def measure(root: Path, rounds: int) -> dict[str, list[tuple[float, float]]]:
    worktree = root / "pool" / "a"
    box = sandbox.probe("require")
    off = sandbox.probe("off")
    times: dict[str, list[tuple[float, float]]] = {"plain": [], "marker": [], "bwrap": []}
    for _ in range(rounds):
        times["plain"].append(await timed(worktree, None))
        times["marker"].append(await timed(worktree, off.confine(worktree, root / "files")))
        times["bwrap"].append(await timed(worktree, box.confine(worktree, root / "files")))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    if shutil.which("bwrap") is None:
        raise SystemExit(f"bubblewrap is needed: {sandbox.INSTALL}")
    with tempfile.TemporaryDirectory(prefix="explore-sandbox-bench-") as folder:
        root = Path(folder)
        (root / "files").mkdir()
        repo = make_repo(root, args.files)
        times = anyio.run(measure, root, args.rounds)
        watched = guard.Guard(repo, repo / ".git", repo / ".git", root / "quarantine")
        prints = []
        for _ in range(max(5, args.rounds // 3)):
            started, used = time.perf_counter(), cpu()
            watched.fingerprint()
            prints.append((time.perf_counter() - started, cpu() - used))
    print(f"{args.files} files, {args.rounds} rounds, medians; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(wall time grows with the load, CPU time is what the work itself costs)")
    wall = {name: statistics.median(w for w, _ in values) for name, values in times.items()}
    used = {name: statistics.median(c for _, c in values) for name, values in times.items()}
    for name in ("plain", "marker", "bwrap"):
        print(f"  {name:7s} wall {wall[name] * 1000:7.1f} ms ({wall[name] / wall['plain']:.2f}x plain)   "
              f"CPU {used[name] * 1000:6.1f} ms ({used[name] / used['plain']:.2f}x plain)  per process")
    fp_wall, fp_cpu = statistics.median(w for w, _ in prints), statistics.median(c for _, c in prints)
    print(f"  guard fingerprint: wall {fp_wall * 1000:.1f} ms, CPU {fp_cpu * 1000:.1f} ms (one per candidate, both modes)")
    for label, table in (("wall", wall), ("CPU", used)):
        box = PROCESSES_PER_CANDIDATE * (table["bwrap"] - table["plain"])
        mark = PROCESSES_PER_CANDIDATE * (table["marker"] - table["plain"])
        print(f"per candidate ({PROCESSES_PER_CANDIDATE} processes), {label}: sandbox {box * 1000:.1f} ms, sandbox off {mark * 1000:.1f} ms; "
              f"target < {TARGET_S * 1000:.0f} ms")


if __name__ == "__main__":
    main()
