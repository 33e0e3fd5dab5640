"""Issue 40.3: mutate's focus run after an untraced big baseline — the failing tests' whole test files
against the failing tests with a bounded contrast (focus.contrast) — in seconds and in where the
bug's line ranks (Ochiai, ties at their average), on one project with one known bug.

Once: the plain suite with pytest-json-report (the failing tests, every test's seconds: what the
baseline gives propose). Then, per round, both focus runs as propose makes them (`localise.collect`,
coverage mode, explore's per-test limit off), the order alternating by round.

Run: .venv/bin/python benchmarks/focus_contrast.py PROJECT FILE:LINE [--python PY] [--rounds 2] [PATHS...]
     e.g. a bigsuite.py `density` case: networkx/classes/function.py:136
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from explore.generators.mutate import focus, localise

OMIT = ["--json-report-omit", "log", "streams", "warnings"]


def baseline(project: Path, python: str, paths: list[str], report: Path) -> tuple[list[str], list[str], dict]:
    """(failing, passing, seconds per test) of a plain run."""
    started = time.monotonic()
    subprocess.run(
        [
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--json-report",
            f"--json-report-file={report}",
            *OMIT,
            *paths,
        ],
        cwd=project,
        capture_output=True,
    )
    print(f"plain suite: {time.monotonic() - started:.1f} s", flush=True)
    tests = json.loads(report.read_text())["tests"]
    seconds = {
        t["nodeid"]: sum(t.get(p, {}).get("duration", 0.0) for p in ("setup", "call", "teardown")) for t in tests
    }
    failing = [t["nodeid"] for t in tests if t["outcome"] in ("failed", "error")]
    passing = [t["nodeid"] for t in tests if t["outcome"] == "passed"]
    return failing, passing, seconds


def measure(project: Path, python: str, chosen: focus.Focus, failing: list[str], bug: tuple[str, int]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        found = anyio.run(
            lambda: localise.collect(
                python, project, Path(tmp), failing, chosen.contrast, select=chosen.files, leave_out=chosen.left_out
            )
        )
        seconds = time.monotonic() - started
    suspects = localise.rank(found.spectrum, exclude=lambda f: localise.is_test_file(f))
    first = suspects[0] if suspects else None
    return {
        "seconds": round(seconds, 1),
        "contrast": len(chosen.contrast),
        "left_out": len(chosen.left_out),
        "bug_rank": localise.position_of(suspects, bug[0], [bug[1]]),
        "first": f"{first.file}:{first.line} ({first.score:.3f})" if first else None,
        "suspects": len(suspects),
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("project", type=Path)
    parser.add_argument("bug", help="FILE:LINE of the bug")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--report", type=Path, help="a plain run's json report to reuse")
    args = parser.parse_args()
    file, _, line = args.bug.rpartition(":")
    report = args.report or Path(tempfile.mkdtemp()) / "plain.json"
    if args.report and report.exists():
        tests = json.loads(report.read_text())["tests"]
        seconds = {
            t["nodeid"]: sum(t.get(p, {}).get("duration", 0.0) for p in ("setup", "call", "teardown")) for t in tests
        }
        failing = [t["nodeid"] for t in tests if t["outcome"] in ("failed", "error")]
        passing = [t["nodeid"] for t in tests if t["outcome"] == "passed"]
    else:
        failing, passing, seconds = baseline(args.project, args.python, args.paths, report)
    print(f"{len(failing)} failing in {sorted({t.split('::')[0] for t in failing})}", flush=True)
    ways = {
        "whole files": focus.focus(failing, passing, args.project),
        "bounded": focus.focus(failing, passing, args.project, seconds),
    }
    for round_ in range(args.rounds):
        for name in list(ways) if round_ % 2 == 0 else list(ways)[::-1]:
            result = measure(args.project, args.python, ways[name], failing, (file, int(line)))
            print(json.dumps({"round": round_ + 1, "way": name, **result}), flush=True)


if __name__ == "__main__":
    main()
