"""Issue 40.3: what mutate's per-test coverage costs the baseline, before and after, as a ratio to the
plain suite measured in the same round, interleaved.

Each round, on one project (a git checkout, e.g. a networkx case of bigsuite.py) and one selection of
test paths: the plain suite; the suite as the loop's baseline runs it with mutate's plugin riding along
(`MutateGenerator.baseline_env`), once with each explore source (--before SRC, --after SRC); for each
whose baseline recorded nothing for the suite's size (focus.BIG_REASON), the coverage run propose then
makes (the failing tests' files under the plugin's coverage mode, as localise.collect runs it, without
explore's per-test limit); then the plain suite again. Ratio = (baseline + that run) / the mean of the
two plain runs. The order of before and after alternates by round.

Run: .venv/bin/python benchmarks/mutate_coverage.py PROJECT --before SRC --after SRC [--rounds 2] [PATHS...]
     (SRC: an explore `src` folder, e.g. from `git archive`; PATHS: test paths, default the project's own)
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

ENV_OF = """
import json, sys
from pathlib import Path
from explore.generators.mutate import MutateGenerator, localise
run_dir, mode = Path(sys.argv[1]), sys.argv[2]
if mode == "baseline":
    env = MutateGenerator({}).baseline_env(run_dir, "bench", [])
else:
    env = localise.coverage_env(None, run_dir, "coverage", run_dir / "coverage-run.json")
    env["PYTEST_ADDOPTS"] = f"-p {localise.PLUGIN_NAME}"  # as localise.collect's command line has it
print(json.dumps(env))
"""


def plugin_env(src: str, run_dir: Path, mode: str, project: Path) -> dict[str, str]:
    """The environment the given explore source gives the baseline (mode `baseline`) or propose's own
    coverage run (`coverage`), with the project first on PYTHONPATH as explore's runner puts it."""
    done = subprocess.run(
        [sys.executable, "-c", ENV_OF, str(run_dir), mode],
        env={**os.environ, "PYTHONPATH": src},
        capture_output=True,
        text=True,
        check=True,
    )
    env = json.loads(done.stdout)
    env["PYTHONPATH"] = os.pathsep.join([str(project), env["PYTHONPATH"]])
    return env


def pytest(project: Path, paths: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
        cwd=project,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    return time.monotonic() - started, (done.stdout.strip().splitlines() or [""])[-1]


def failing_files(project: Path, paths: list[str]) -> list[str]:
    """The files of the tests failing in the plain suite (from pytest's `-rf` summary)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", "--tb=no", *paths],
        cwd=project,
        capture_output=True,
        text=True,
    )
    return sorted({line.split()[1].split("::")[0] for line in done.stdout.splitlines() if line.startswith("FAILED ")})


def baseline(src: str, project: Path, paths: list[str], failing: list[str], work: Path) -> dict[str, object]:
    run_dir = work / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    env = plugin_env(src, run_dir, "baseline", project)
    wall, said = pytest(project, paths, env)
    result = json.loads((run_dir / "mutate-baseline" / "coverage-run.json").read_text())
    out: dict[str, object] = {"baseline_s": wall, "status": result.get("status"), "said": said}
    if result.get("status") == "skipped":  # propose measures the failing tests' files in a run of its own
        focus_dir = work / "focus"
        shutil.rmtree(focus_dir, ignore_errors=True)
        focus_wall, _ = pytest(project, failing, plugin_env(src, focus_dir, "coverage", project))
        measured = json.loads((focus_dir / "coverage-run.json").read_text())
        out["focus_s"] = focus_wall
        out["focus_tests"] = len(
            {t for info in measured["trace"]["files"].values() for ts in info["contexts"].values() for t in ts}
        )
    shutil.rmtree(run_dir, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--before", required=True, metavar="SRC")
    parser.add_argument("--after", required=True, metavar="SRC")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    project = Path(args.project).resolve()
    failing = failing_files(project, args.paths)
    print(f"failing tests' files: {failing}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="explore-mutcov-"))
    try:
        for n in range(args.rounds):
            order = [("before", args.before), ("after", args.after)]
            if n % 2:
                order.reverse()
            load = os.getloadavg()[0]
            plain, said = pytest(project, args.paths)
            runs = {name: baseline(src, project, args.paths, failing, work) for name, src in order}
            plain_after, _ = pytest(project, args.paths)
            mean = (plain + plain_after) / 2
            parts = []
            for name in ("before", "after"):
                run = runs[name]
                total = float(run["baseline_s"]) + float(run.get("focus_s", 0.0))  # type: ignore[arg-type]
                focus = f" + focus {run['focus_s']:.1f}s ({run['focus_tests']} tests)" if "focus_s" in run else ""
                parts.append(
                    f"{name}: baseline {run['baseline_s']:.1f}s [{run['status']}]{focus} = {total / mean:.2f}x"
                )
            print(
                f"round {n + 1} (load {load:.1f}-{os.getloadavg()[0]:.1f}): plain {plain:.1f}s / {plain_after:.1f}s"
                f" ({said}); " + "; ".join(parts),
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
