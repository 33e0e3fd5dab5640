"""Issue 8's acceptance benchmark: per-candidate worktree setup + teardown, a run's pool of
worktrees (reset between candidates) against a fresh worktree per candidate.

A generated git repo of 5,000 files; 5 iterations x 3 candidates (a, b, c), one after the
other, each candidate leaving the kind of mess a candidate leaves (a tracked file edited, an
untracked file, ignored bytecode). Both ways copy the ignored `.env` the project needs
(`worktree_include`).

  pool   explore.edges.worktrees.WorktreePool: acquire(slot, commit) — a `git worktree add` the
         first time a slot is used, a reset (`reset --hard` + `clean`) after that — and
         remove_all() once at the end, spread over the 15 candidates.
  fresh  `git worktree add --detach` + `git worktree remove --force` per candidate.

Run: /work/venv/bin/python benchmarks/worktree_pool.py [--files N] [--iterations N]
Target (issue 8): <= 0.1 s per candidate with the pool.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}
TARGET_S = 0.1
SLOTS = "abc"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_big_repo(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    body = "".join(f"def f{j}(x):\n    return x * {j} + {j}\n\n\n" for j in range(12))
    for i in range(files - 2):
        folder = root / "pkg" / f"m{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f'"""Module {i}."""\n\n' + body)
    (root / ".gitignore").write_text("__pycache__/\n.env\n")
    (root / "README.md").write_text("generated\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    (root / ".env").write_text("SECRET=local\n")  # ignored, needed by the project: worktree_include


def mess_up(worktree: Path, n: int) -> None:
    """What a candidate leaves behind: an edit, a new file, ignored bytecode."""
    target = worktree / "pkg" / "m010" / "mod01000.py"
    target.write_text(target.read_text() + f"\n\ndef extra_{n}():\n    return {n}\n")
    (worktree / "pkg" / "m010" / f"new_{n}.py").write_text("x = 1\n")
    cache = worktree / "pkg" / "m010" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "mod01000.cpython-311.pyc").write_bytes(b"\0" * 4096)


def check_clean(worktree: Path) -> None:
    assert "extra_" not in (worktree / "pkg" / "m010" / "mod01000.py").read_text(), "stale edit survived"
    assert not list((worktree / "pkg" / "m010").glob("new_*.py")), "untracked file survived"
    assert (worktree / ".env").exists(), ".env not copied"


def bench_pool(repo_root: Path, commit: str, iterations: int) -> dict:
    import git as gitpython

    from explore.edges.worktrees import WorktreePool, default_root

    repo = gitpython.Repo(repo_root)
    pool = WorktreePool(repo, repo_root, default_root(repo_root) / "bench-pool", include=[".env"])
    first, later, removal = [], [], 0.0
    try:
        for it in range(iterations):
            for n, slot in enumerate(SLOTS):
                t0 = time.perf_counter()
                path, created = pool.acquire(slot, commit)
                elapsed = time.perf_counter() - t0
                assert created == (it == 0)
                check_clean(path)
                (first if created else later).append(elapsed)
                mess_up(path, 10 * it + n)
    finally:
        t0 = time.perf_counter()
        pool.remove_all()
        removal = time.perf_counter() - t0
        repo.close()
    candidates = iterations * len(SLOTS)
    return {
        "first": first,
        "later": later,
        "removal": removal,
        "per_candidate": (sum(first) + sum(later) + removal) / candidates,
    }


def bench_fresh(repo_root: Path, commit: str, iterations: int, folder: Path) -> dict:
    setups, teardowns, rounds = [], [], []
    live: list[Path] = []
    try:
        for it in range(iterations):
            round_times = []
            for n, slot in enumerate(SLOTS):
                path = folder / f"it{it}-{slot}"
                t0 = time.perf_counter()
                git(repo_root, "worktree", "add", "--detach", "--force", str(path), commit)
                live.append(path)
                shutil.copy2(repo_root / ".env", path / ".env")
                t1 = time.perf_counter()
                check_clean(path)
                mess_up(path, 10 * it + n)
                t2 = time.perf_counter()
                git(repo_root, "worktree", "remove", "--force", "--force", str(path))
                live.remove(path)
                t3 = time.perf_counter()
                setups.append(t1 - t0)
                teardowns.append(t3 - t2)
                round_times.append((t1 - t0) + (t3 - t2))
            rounds.append(statistics.mean(round_times))
    finally:
        for path in live:
            subprocess.run(
                ["git", "worktree", "remove", "--force", "--force", str(path)], cwd=repo_root, capture_output=True
            )
        subprocess.run(["git", "worktree", "prune"], cwd=repo_root, capture_output=True)
    totals = [s + t for s, t in zip(setups, teardowns)]
    return {
        "setup": setups,
        "teardown": teardowns,
        "rounds": rounds,
        "per_candidate": statistics.mean(totals),
        "max": max(totals),
    }


def table(rows: list[tuple[str, str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    return "\n".join(f"  {a:<{width}}  {b:>{value_width}}  {c}".rstrip() for a, b, c in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="explore-bench-pool-")).resolve()
    previous = os.environ.get("EXPLORE_WORKTREES_DIR")
    os.environ["EXPLORE_WORKTREES_DIR"] = str(tmp / "worktrees")
    try:
        repo_root = tmp / "big"
        started = time.perf_counter()
        make_big_repo(repo_root, args.files)
        commit = git(repo_root, "rev-parse", "HEAD")
        os.sync()  # the generator's writeback is not the worktrees' cost
        generated = time.perf_counter() - started
        load = os.getloadavg()
        n = args.iterations * len(SLOTS)
        print(
            f"worktree setup + teardown per candidate: {args.iterations} iterations x {len(SLOTS)} candidates, "
            f"generated {args.files:,}-file repo ({generated:.1f} s to generate)"
        )
        print(
            f"{os.cpu_count()} CPUs, load average {load[0]:.1f}, git {git(tmp, '--version').split()[-1]}, "
            f"worktrees in {os.environ['EXPLORE_WORKTREES_DIR']}"
        )

        pool = bench_pool(repo_root, commit, args.iterations)
        fresh = bench_fresh(repo_root, commit, args.iterations, tmp / "worktrees" / "fresh")

        def ms(values: list[float]) -> str:
            return f"{1000 * statistics.mean(values):.0f} ms (max {1000 * max(values):.0f})"

        rows = [
            (f"pool: first acquire per slot = worktree add ({len(pool['first'])}x)", ms(pool["first"]), ""),
            (f"pool: later acquires = reset + clean + .env ({len(pool['later'])}x)", ms(pool["later"]), ""),
            ("pool: remove_all at the end (3 worktrees)", f"{1000 * pool['removal']:.0f} ms", ""),
            (
                f"pool: per candidate, all of it / {n}",
                f"{pool['per_candidate']:.3f} s",
                f"target <= {TARGET_S} s: {'met' if pool['per_candidate'] <= TARGET_S else 'NOT met'}",
            ),
            (
                "pool: per candidate, steady state (a reset)",
                f"{statistics.mean(pool['later']):.3f} s",
                f"target <= {TARGET_S} s: {'met' if statistics.mean(pool['later']) <= TARGET_S else 'NOT met'}",
            ),
            (f"fresh: worktree add + .env ({n}x)", ms(fresh["setup"]), ""),
            (f"fresh: worktree remove ({n}x)", ms(fresh["teardown"]), ""),
            ("fresh: per candidate (mean / max)", f"{fresh['per_candidate']:.3f} / {fresh['max']:.3f} s", ""),
            ("fresh: per candidate by iteration", " ".join(f"{v:.2f}" for v in fresh["rounds"]) + " s", ""),
            ("fresh / pool, per candidate", f"{fresh['per_candidate'] / pool['per_candidate']:.1f}x", ""),
        ]
        print(table(rows))
        leftover = [p for p in (tmp / "worktrees").rglob(".git")] if (tmp / "worktrees").exists() else []
        registered = git(repo_root, "worktree", "list").splitlines()
        if leftover or len(registered) != 1:
            print(f"warning: worktrees left behind: {leftover or registered}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if previous is None:
            os.environ.pop("EXPLORE_WORKTREES_DIR", None)
        else:
            os.environ["EXPLORE_WORKTREES_DIR"] = previous


if __name__ == "__main__":
    sys.exit(main())
