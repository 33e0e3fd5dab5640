"""Issue 31.2's cost figure: the final confirmation of each merged winner (its commit's suite
unsharded in a clean checkout, confirmation.py), in seconds per case, with and without.

Each case is repaired with `explore run --agent mutate` twice from fresh copies:
  auto      the default sharding: on the corpus's small suites a winner's validation is one
            unsharded job on its own scrubbed tree, which *is* the confirmation (reused: 0 s);
  shards=2  `--shards 2`: full-suite runs are sharded when the suite has two test files or more,
            so every merge pays a confirmation run. The corpus cases have one test file each (never
            sharded), hence a generated case, `multi_file`: a module whose `add` subtracts and
            --files test files of 40 tests each (every test sleeps 5 ms), which shards do split.

The measure, in the same run: "with" is explore's wall time for the case; the confirmation is a
step of its own between the validation and the merge, timed by explore (`iterations[].timing.
confirmation` of the JSON summary), so "without" is "with" minus those seconds. The ratio is
with / without. The repaired status is printed too: it must be the same in both modes.

Run: .venv/bin/python benchmarks/confirmation.py [--case NAME]... [--parallel 3]
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
from dataclasses import dataclass
from pathlib import Path

from explore.bench.corpus import load_corpus
from explore.bench.runner import prepare

DEFAULT_CASES = [
    "calendar_leap_year",
    "cart_subtotal",
    "brackets_balance",
    "color_blend",
    "count_peaks",
    "config_comments",
]
MODES = {"auto": [], "shards=2": ["--shards", "2"]}


@dataclass
class Generated:
    name: str
    files: int

    def make(self, repo: Path) -> None:
        (repo / "tests").mkdir(parents=True)
        (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
        (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\ntestpaths = ["tests"]\n')
        for k in range(self.files):
            tests = "".join(
                f"\n\ndef test_{k}_{t}():\n    time.sleep(0.005)\n    assert {'add' if t == 0 else 'mul'}({t}, 2) == {t + 2 if t == 0 else 2 * t}\n"
                for t in range(40)
            )
            (repo / "tests" / f"test_part{k}.py").write_text(f"import time\n\nfrom calc import add, mul{tests}")
        for argv in (
            ["init", "-q", "-b", "main"],
            ["add", "-A"],
            ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "case"],
        ):
            subprocess.run(["git", *argv], cwd=repo, check=True)


def run_case(case, extra: list[str], parallel: int) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix=f"explore-confirm-{case.name}-"))
    try:
        if isinstance(case, Generated):
            repo = scratch / "repo"
            case.make(repo)
        else:
            repo, _ = prepare(case, scratch)
        env = {
            **os.environ,
            "EXPLORE_WORKTREES_DIR": str(scratch / "worktrees"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        }
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "explore",
                "run",
                str(repo),
                "--agent",
                "mutate",
                "--parallel",
                str(parallel),
                "--json",
                *extra,
            ],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        wall = time.monotonic() - started
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        iterations = summary.get("iterations") or []
        confirmation = sum(i.get("timing", {}).get("confirmation", 0.0) for i in iterations)
        merged = sum(1 for i in iterations if i.get("winner"))
        return {
            "status": summary.get("status"),
            "exit": done.returncode,
            "with": wall,
            "confirmation": confirmation,
            "merged": merged,
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="corpus case (repeatable; default: six of them)")
    parser.add_argument("--parallel", type=int, default=3)
    parser.add_argument("--files", type=int, default=4, help="test files of the generated case (0: leave it out)")
    args = parser.parse_args()
    cases: list = load_corpus(Path(__file__).parent / "cases", args.case or DEFAULT_CASES)
    if args.files:
        cases.append(Generated("multi_file", args.files))
    print(
        f"{'case':24} {'mode':9} {'status':10} {'merged':>6} {'with s':>8} {'confirm s':>9} {'without s':>9} {'ratio':>6}"
    )
    totals = {mode: [0.0, 0.0] for mode in MODES}
    for case in cases:
        for mode, extra in MODES.items():
            row = run_case(case, extra, args.parallel)
            without = row["with"] - row["confirmation"]
            totals[mode][0] += row["with"]
            totals[mode][1] += without
            print(
                f"{case.name:24} {mode:9} {row['status']:10} {row['merged']:>6} {row['with']:>8.1f} {row['confirmation']:>9.1f} "
                f"{without:>9.1f} {row['with'] / without:>6.3f}",
                flush=True,
            )
    for mode, (with_s, without_s) in totals.items():
        print(
            f"{'all cases':24} {mode:9} {'':10} {'':>6} {with_s:>8.1f} {with_s - without_s:>9.1f} {without_s:>9.1f} {with_s / without_s:>6.3f}"
        )


if __name__ == "__main__":
    main()
