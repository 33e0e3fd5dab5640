"""Issue 23's benchmark: what the sandbox and the outside-write guard cost per candidate.

A generated git repo (`--files` Python files) and a linked worktree of it, as a run's pool has.
Three ways to start the same process in the worktree through `explore.edges.procs.run`, interleaved
round by round so the machine's load drifts over all three alike:

  plain     no confinement (how explore ran every process before issue 23);
  marker    sandbox off: private TMPDIR/XDG_CACHE_HOME and the environment marker, plus the scan
            of every process's environment for daemons when the process ends;
  sandbox   sandbox on: the same inside the sandbox this machine has — bubblewrap (read-only
            root, the worktree writable, a PID namespace that dies with it) or, without it,
            Landlock (issue 37: a Python launcher restricts itself, then execs the command).

The process is `python -c pass` (what every agent and test run starts with at least). A
candidate starts ~3 such processes (its agent, its affected tests, its full suite), so the
per-candidate sandbox overhead is 3 x (median bwrap - median plain). The guard (detection, on
in both modes) costs two fingerprints per candidate — the one before is shared by the fan-out,
so one per candidate is counted — measured here on the generated repo, with the part issue 37
added (the object store's files by inode, size and ctime) measured on its own.

Run: /work/venv/bin/python benchmarks/sandbox_overhead.py [--files N] [--rounds N]
Target (issue 23): well under the 0.1 s per candidate the worktree pool costs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from explore.edges import guard, objects, procs, sandbox

PROCESSES_PER_CANDIDATE = 3
TARGET_S = 0.1
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


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


async def timed(worktree: Path, confine: sandbox.Confinement | None) -> float:
    """Wall seconds of one process, start to end."""
    started = time.perf_counter()
    done = await procs.run([sys.executable, "-c", "pass"], worktree, confine=confine)
    if done.exit_code != 0:
        raise SystemExit(f"the process failed ({done.exit_code}): {done.output_tail}")
    return time.perf_counter() - started


async def measure(root: Path, rounds: int) -> dict[str, list[float]]:
    worktree = root / "pool" / "a"
    box = sandbox.probe("require")
    off = sandbox.probe("off")
    times: dict[str, list[float]] = {"plain": [], "marker": [], "sandbox": []}
    for _ in range(rounds):
        times["plain"].append(await timed(worktree, None))
        times["marker"].append(await timed(worktree, off.confine(worktree, root / "files")))
        times["sandbox"].append(await timed(worktree, box.confine(worktree, root / "files")))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    mechanism = sandbox.probe("require").mechanism  # a usage error without bubblewrap or Landlock
    with tempfile.TemporaryDirectory(prefix="explore-sandbox-bench-") as folder:
        root = Path(folder)
        (root / "files").mkdir()
        repo = make_repo(root, args.files)
        times = anyio.run(measure, root, args.rounds)
        watched = guard.Guard(repo, repo / ".git", repo / ".git", root / "quarantine")
        prints, stores = [], []
        for _ in range(max(5, args.rounds // 3)):
            started = time.perf_counter()
            watched.fingerprint()
            prints.append(time.perf_counter() - started)
            started = time.perf_counter()
            objects.files(repo / ".git")
            stores.append(time.perf_counter() - started)
    print(
        f"{args.files} files, {args.rounds} rounds; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores. Wall time grows "
        "with the load: the median is what this machine gave, the minimum what a process costs when it gets a core at once"
    )
    for stat_name, pick in (("median", statistics.median), ("minimum", min)):
        wall = {name: pick(values) for name, values in times.items()}
        print(f"  {stat_name}:")
        for name in ("plain", "marker", "sandbox"):
            print(f"    {name:7s} {wall[name] * 1000:7.1f} ms per process ({wall[name] / wall['plain']:.2f}x plain)")
        box = PROCESSES_PER_CANDIDATE * (wall["sandbox"] - wall["plain"])
        mark = PROCESSES_PER_CANDIDATE * (wall["marker"] - wall["plain"])
        fingerprint = pick(prints)
        print(
            f"    per candidate ({PROCESSES_PER_CANDIDATE} processes): sandbox ({mechanism}) +{box * 1000:.1f} ms, sandbox off "
            f"(marker, daemon scan) +{mark * 1000:.1f} ms; the guard's fingerprint {fingerprint * 1000:.1f} ms (both modes; "
            f"its object store part {pick(stores) * 1000:.1f} ms); target < {TARGET_S * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
