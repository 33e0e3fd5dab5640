"""Issue 40's big real suite: networkx (from its PyPI sdist, fetched by pip into a temporary
folder: nothing fetched is committed), one-line bugs injected in its library code, repaired by
the floor — an agent that applies the known fix (`--agent command`, one candidate): what explore's
own costs are — unsharded and with `--shards 2`, against the plain suite's wall time measured in
the same round (the machine is shared: compare the ratios of one round, not seconds).

Each round, per bug: the plain suite (`pytest -q` on the broken tree), then each explore (with
--before SRC: that checkout's explore, then --after SRC or this checkout's), each once unsharded
and once with --shards 2, then the plain suite again; the ratio is explore's wall time over the
two suite runs' mean.

Run: .venv/bin/python benchmarks/bigsuite.py [--rounds 1] [--bugs density,histogram] [--modes plain,shards]
     [--before SRC] [--after SRC] [--source DIR] [--logs DIR]   (DIR: an unpacked networkx sdist;
     --logs: each explore's --verbose stderr, kept)
Targets (issue 40): floor <= 2.2x the suite, --shards 2 floor <= 1.6x, every case repaired.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VERSION = "3.4.2"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}
BUGS = {
    "density": ("networkx/classes/function.py", "        d *= 2\n", "        d *= 3\n"),
    "histogram": (
        "networkx/classes/function.py",
        "range(max(counts) + 1 if counts else 0)",
        "range(max(counts) if counts else 0)",
    ),
    "degree": ("networkx/classes/graph.py", "        return len(self._adj)\n", "        return len(self._adj) - 1\n"),
}
AGENT = """\
import os, pathlib, sys
sys.stdin.read()
if os.environ["EXPLORE_CANDIDATE"] == "a":
    path = pathlib.Path({path!r})
    path.write_text(path.read_text().replace({broken!r}, {fixed!r}, 1))
"""


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def fetch(work: Path) -> Path:
    """networkx's sdist, by pip, unpacked under work."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", f"networkx=={VERSION}"],
        cwd=work,
        check=True,
    )
    shutil.unpack_archive(str(work / f"networkx-{VERSION}.tar.gz"), work)
    return work / f"networkx-{VERSION}"


def case(source: Path, root: Path, bug: str, timeout: float | None = None) -> Path:
    """A git repo of networkx with one bug; explore runs this interpreter's pytest on it (timeout:
    its baseline-timeout and branch-timeout, for a machine so loaded the suite outlasts 600 s)."""
    path, fixed, broken = BUGS[bug]
    shutil.copytree(source / "networkx", root / "networkx")
    limits = f"baseline-timeout = {timeout:g}\nbranch-timeout = {timeout:g}\n" if timeout else ""
    (root / "pyproject.toml").write_text(
        f'[tool.pytest.ini_options]\ntestpaths = ["networkx"]\n\n[tool.explore]\npython = "{sys.executable}"\n{limits}'
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


def plain_suite(template: Path, work: Path) -> tuple[float, str]:
    repo = work / "plain"
    shutil.copytree(template, repo, symlinks=True)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo, capture_output=True, text=True
    )
    wall = time.monotonic() - started
    shutil.rmtree(repo, ignore_errors=True)
    return wall, (done.stdout.strip().splitlines() or [""])[-1]


def explore(
    template: Path, work: Path, agent: Path, source: str | None, shards: list[str], log: Path | None = None
) -> tuple[float, dict, int]:
    repo = work / "repo"
    shutil.copytree(template, repo, symlinks=True)
    env = {**os.environ, "EXPLORE_WORKTREES_DIR": str(work / "worktrees")}
    env.pop("ANTHROPIC_API_KEY", None)
    if source:
        env["PYTHONPATH"] = source
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "explore", "run", str(repo), "--agent", "command", "--agent-cmd",
         f"{sys.executable} {agent}", "--parallel", "1", "--max-iterations", "2", *shards, "--json",
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
    shutil.rmtree(work, ignore_errors=True)
    return wall, summary, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--bugs", default="density,histogram")
    parser.add_argument("--before", metavar="SRC")
    parser.add_argument("--after", metavar="SRC")
    parser.add_argument("--source", metavar="DIR", help="an unpacked networkx sdist (else pip fetches it)")
    parser.add_argument("--modes", default="plain,shards", help="plain (unsharded), shards (--shards 2), or both")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--timeout", type=float, help="the cases' baseline-timeout and branch-timeout (s)")
    parser.add_argument("--logs", metavar="DIR", help="keep each explore's --verbose stderr here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="explore-bigsuite-"))
    sources = {"before": args.before, "after": args.after} if args.before else {"after": args.after}
    try:
        source = Path(args.source) if args.source else fetch(work)
        for n in range(args.rounds):
            for bug in args.bugs.split(","):
                template = case(source, work / f"case-{bug}-{n}", bug, args.timeout)
                path, fixed, broken = BUGS[bug]
                agent = work / f"agent-{bug}.py"
                agent.write_text(AGENT.format(path=path, broken=broken, fixed=fixed))
                suite, said = plain_suite(template, work)
                walls: dict[str, tuple[float, dict, int]] = {}
                for name, src in sources.items():
                    modes = {"plain": [], "shards": ["--shards", "2"]}
                    for shards in (modes[m] for m in args.modes.split(",")):
                        label = f"{name}{' --shards 2' if shards else ''}"
                        load = os.getloadavg()[0]
                        log = Path(args.logs) / f"{n + 1}-{bug}-{label.replace(' ', '')}.log" if args.logs else None
                        walls[label] = explore(
                            template, work / f"run-{label.replace(' ', '')}", agent, src, shards, log
                        )
                        wall, summary, code = walls[label]
                        its = summary.get("iterations") or []
                        timing = its[0].get("timing", {}) if its else {}
                        phases = ", ".join(
                            f"{k} {v:.1f}s" for k, v in timing.items() if isinstance(v, (int, float)) and v >= 0.05
                        )
                        final = summary.get("final", {})
                        print(
                            f"round {n + 1} {bug} {label}: {wall:.1f}s exit {code} {summary.get('status')} "
                            f"final {final.get('passed')}/{final.get('total')} load {load:.1f}; {phases}",
                            flush=True,
                        )
                suite_after, _ = plain_suite(template, work)
                mean = (suite + suite_after) / 2
                print(
                    f"round {n + 1} {bug}: suite {suite:.1f}s / {suite_after:.1f}s ({said}); "
                    + ", ".join(f"{label} {wall / mean:.2f}x" for label, (wall, _, _) in walls.items()),
                    flush=True,
                )
                shutil.rmtree(template, ignore_errors=True)
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
