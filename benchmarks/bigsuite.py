"""Issue 40's big real suite: networkx 3.4.2 (its PyPI sdist, fetched by pip once and kept unpacked
in the cache: nothing fetched is committed), one-line bugs injected in its library code, repaired
three ways against the plain suite's wall time measured in the same round (the machine is shared:
compare the ratios of one round, not seconds):

- plain:  the floor — an agent that applies the known fix (`--agent command`, one candidate): what
          explore's own costs are;
- shards: the same with `--shards 2`;
- mutate: `--agent mutate` at its default strategy, which must find the fix itself.

Each round, per bug: the plain suite (`pytest -q` on the broken tree), then for each mode each
explore (with --before SRC: that checkout's explore, then --after SRC or this checkout's; the order
alternates by round), then the plain suite again; × suite is explore's wall time over the two suite
runs' mean. A table per round says, per bug and mode: the suite's two runs, explore's seconds,
× suite, the baseline / propose / fan-out + validation split, and whether the run repaired the case
(every test passing; for mutate, also whether its edit is the known fix: "exact").

The cache (~/.cache/explore-bigsuite, or $EXPLORE_BIGSUITE_CACHE) holds the unpacked sdist and a
venv for the suite's own interpreter (pytest, pytest-json-report and coverage at the versions this
interpreter has: the plain suite and every explore of a round run the same one), built on first use.

Run: .venv/bin/python benchmarks/bigsuite.py [--rounds 1] [--bugs density,histogram,degree]
     [--modes plain,shards,mutate] [--before SRC] [--after SRC] [--logs DIR] [--timeout S]
     (SRC: a checkout's src/, run by PYTHONPATH; --logs: each explore's --verbose stderr, kept)
Targets (issue 40): floor <= 2.2x the suite, --shards 2 floor <= 1.6x, mutate <= 3x, every case repaired.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

VERSION = "3.4.2"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}
BUGS = {  # name: (file, the fixed text, the broken text); each once in its file, each failing tests
    "density": ("networkx/classes/function.py", "        d *= 2\n", "        d *= 3\n"),  # mutate: constant
    "histogram": (  # mutate: a range bound + 1
        "networkx/classes/function.py",
        "range(max(counts) + 1 if counts else 0)",
        "range(max(counts) if counts else 0)",
    ),
    "degree": (  # an undirected graph's degree counts a self-loop twice; mutate: arithmetic - -> +
        "networkx/classes/reportviews.py",
        "            return len(nbrs) + (n in nbrs)\n",
        "            return len(nbrs) - (n in nbrs)\n",
    ),
}
MODES = {
    "plain": ["--agent", "command", "--parallel", "1"],
    "shards": ["--agent", "command", "--parallel", "1", "--shards", "2"],
    "mutate": ["--agent", "mutate"],
}
TARGETS = {"plain": 2.2, "shards": 1.6, "mutate": 3.0}
SUITE_PACKAGES = ("pytest", "pytest-json-report", "coverage")
AGENT = """\
import os, pathlib, sys
sys.stdin.read()
if os.environ["EXPLORE_CANDIDATE"] == "a":
    path = pathlib.Path({path!r})
    path.write_text(path.read_text().replace({broken!r}, {fixed!r}, 1))
"""


def cache_dir() -> Path:
    return Path(os.environ.get("EXPLORE_BIGSUITE_CACHE") or Path.home() / ".cache" / "explore-bigsuite")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def sdist(cache: Path) -> Path:
    """networkx's sdist unpacked in the cache (pip fetches it the first time)."""
    source = cache / f"networkx-{VERSION}"
    if (source / "networkx" / "__init__.py").exists():
        return source
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*pip, f"networkx=={VERSION}"], cwd=tmp, check=True)
        shutil.unpack_archive(str(Path(tmp) / f"networkx-{VERSION}.tar.gz"), tmp)
        shutil.move(str(Path(tmp) / f"networkx-{VERSION}"), source)
    return source


def suite_python(cache: Path) -> str:
    """The suite's interpreter: a venv in the cache with this interpreter's pytest, pytest-json-report
    and coverage (the versions pinned: a round measures explore, not a package upgrade)."""
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in SUITE_PACKAGES]
    venv = cache / f"venv-{sys.version_info.major}.{sys.version_info.minor}"
    python = venv / "bin" / "python"
    stamp = venv / "bigsuite-pins.txt"
    if python.exists() and stamp.exists() and stamp.read_text() == "\n".join(pins):
        return str(python)
    shutil.rmtree(venv, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *pins], check=True)
    stamp.write_text("\n".join(pins))
    return str(python)


def case(source: Path, root: Path, bug: str, python: str) -> Path:
    """A git repo of networkx with one bug; explore runs python's pytest on it."""
    path, fixed, broken = BUGS[bug]
    shutil.copytree(source / "networkx", root / "networkx")
    (root / "pyproject.toml").write_text(
        f'[tool.pytest.ini_options]\ntestpaths = ["networkx"]\n\n[tool.explore]\npython = "{python}"\n'
    )
    (root / ".gitignore").write_text("__pycache__/\n")
    target = root / path
    text = target.read_text()
    if text.count(fixed) != 1:
        sys.exit(f"{bug}: {fixed!r} is not once in {path}")
    target.write_text(text.replace(fixed, broken))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"networkx {VERSION} with bug {bug}")
    return root


def plain_suite(template: Path, work: Path, python: str) -> tuple[float, str]:
    repo = work / "plain"
    shutil.copytree(template, repo, symlinks=True)
    started = time.monotonic()
    done = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo, capture_output=True, text=True
    )
    wall = time.monotonic() - started
    shutil.rmtree(repo, ignore_errors=True)
    return wall, (done.stdout.strip().splitlines() or [""])[-1]


@dataclass
class Result:
    wall: float
    code: int
    summary: dict
    load: float
    repaired: str


def explore(
    template: Path, work: Path, bug: str, agent: Path, source: str | None, mode: str, log: Path | None, limit: float
) -> Result:
    """One explore run on a copy of template; limit: its --branch-timeout (the baseline's limit too)."""
    repo = work / "repo"
    shutil.copytree(template, repo, symlinks=True)
    env = {**os.environ, "EXPLORE_WORKTREES_DIR": str(work / "worktrees")}
    env.pop("ANTHROPIC_API_KEY", None)
    if source:
        env["PYTHONPATH"] = source
    args = [*MODES[mode], "--branch-timeout", f"{limit:.0f}"]
    if mode != "mutate":
        args += ["--agent-cmd", f"{sys.executable} {agent}"]
    load = os.getloadavg()[0]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "explore", "run", str(repo), *args, "--max-iterations", "2", "--json",
         *(["--verbose"] if log else [])],
        cwd=repo, env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    wall = time.monotonic() - started
    if log:
        log.write_text(done.stderr)
    try:
        summary = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        summary = {"error": done.stderr[-2000:]}
    final = summary.get("final") or {}
    repaired = "no"
    if summary.get("status") == "succeeded" and final.get("total") and final.get("passed") == final.get("total"):
        path, fixed, _ = BUGS[bug]
        exact = fixed in (repo / path).read_text() if (repo / path).exists() else False
        repaired = "yes (exact)" if exact else "yes (not exact)"
    shutil.rmtree(work, ignore_errors=True)
    return Result(wall, done.returncode, summary, load, repaired)


def split(summary: dict) -> str:
    """baseline / propose / fan-out + validation seconds, summed over the run's iterations."""
    sums = {"baseline": 0.0, "propose": 0.0, "fanout": 0.0, "validation": 0.0}
    for it in summary.get("iterations") or []:
        for key in sums:
            value = (it.get("timing") or {}).get(key)
            sums[key] += value if isinstance(value, (int, float)) else 0.0
    return f"{sums['baseline']:.1f} / {sums['propose']:.1f} / {sums['fanout']:.1f} + {sums['validation']:.1f}"


def phases(summary: dict) -> str:
    parts = []
    for n, it in enumerate(summary.get("iterations") or [], 1):
        timing = it.get("timing") or {}
        said = ", ".join(f"{k} {v:.1f}" for k, v in timing.items() if isinstance(v, (int, float)) and v >= 0.05)
        parts.append(f"it{n}: {said}")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--bugs", default="density,histogram,degree")
    parser.add_argument("--before", metavar="SRC", help="a checkout's src/ to compare with (run first in odd rounds)")
    parser.add_argument("--after", metavar="SRC", help="the checkout's src/ measured (default: this interpreter's)")
    parser.add_argument("--modes", default="plain,shards,mutate", help="of plain, shards, mutate")
    parser.add_argument(
        "--timeout",
        type=float,
        help="the runs' --branch-timeout and the baseline's limit (default: 600 s or 4x the suite)",
    )
    parser.add_argument("--logs", metavar="DIR", help="keep each explore's --verbose stderr here")
    parser.add_argument("--python", help="the suite's interpreter (default: a venv built in the cache)")
    args = parser.parse_args()
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    source = sdist(cache)
    python = args.python or suite_python(cache)
    if args.logs:
        Path(args.logs).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="explore-bigsuite-"))
    checkouts = [("before", args.before), ("after", args.after)] if args.before else [("after", args.after)]
    modes = args.modes.split(",")
    targets = ", ".join(f"{m} <= {TARGETS[m]}x" for m in modes)
    print(f"networkx {VERSION}, suite python {python}; targets: {targets}", flush=True)
    try:
        for n in range(args.rounds):
            rows: list[str] = []
            order = checkouts if n % 2 == 0 else checkouts[::-1]
            for bug in args.bugs.split(","):
                template = case(source, work / f"case-{bug}-{n}", bug, python)
                path, fixed, broken = BUGS[bug]
                agent = work / f"agent-{bug}.py"
                agent.write_text(AGENT.format(path=path, broken=broken, fixed=fixed))
                suite, said = plain_suite(template, work, python)
                print(f"round {n + 1} {bug}: plain suite {suite:.1f}s ({said})", flush=True)
                limit = args.timeout or max(600.0, 4 * suite)  # a loaded machine: the baseline overran 600 s
                results: list[tuple[str, str, Result]] = []
                for mode in modes:
                    for name, src in order:
                        log = Path(args.logs) / f"{n + 1}-{bug}-{mode}-{name}.log" if args.logs else None
                        found = explore(template, work / f"run-{mode}-{name}", bug, agent, src, mode, log, limit)
                        results.append((mode, name, found))
                        print(
                            f"round {n + 1} {bug} {mode} {name}: {found.wall:.1f}s exit {found.code} "
                            f"{found.summary.get('status')} repaired {found.repaired} load {found.load:.1f}; "
                            f"{phases(found.summary)}",
                            flush=True,
                        )
                suite_after, _ = plain_suite(template, work, python)
                mean = (suite + suite_after) / 2
                for mode, name, found in results:
                    ratio = found.wall / mean
                    held = (
                        ("≤" if ratio <= TARGETS[mode] else ">") if found.repaired != "no" else "not repaired; target"
                    )
                    rows.append(
                        f"| {bug} | {mode} | {name} | {suite:.1f} / {suite_after:.1f} | {found.wall:.1f} | "
                        f"**{ratio:.2f}×** ({held} {TARGETS[mode]}) | {split(found.summary)} | {found.repaired} | "
                        f"{found.load:.1f} |"
                    )
                shutil.rmtree(template, ignore_errors=True)
            print(f"\nround {n + 1}:")
            print("| bug | mode | explore | plain suite s (before / after) | explore s | × suite (target) "
                  "| baseline / propose / fan-out + validation s | repaired | load |")  # fmt: skip
            print("|---|---|---|---|---:|---|---|---|---:|")
            print("\n".join(rows), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
