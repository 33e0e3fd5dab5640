"""How fast `mutate` screens mutants: the pre-imported fork worker against a fresh
`python -m pytest` per mutant, on a small module with a sub-second test file.

    python benchmarks/mutate_throughput.py [--mutants 60] [--lanes 1]
    python benchmarks/mutate_throughput.py --formulas benchmarks/cases   # compare SBFL formulas

Prints mutants/s for both designs and their ratio. With --formulas, runs every corpus case's
tests under per-test coverage and reports where each formula ranks the reference fix's line.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from explore.edges.testing import TestCommand, run_tests
from explore.generators.mutate import localise
from explore.generators.mutate.edits import Source, mutated_sources
from explore.generators.mutate.operators import mutants_in
from explore.generators.mutate.screen import Job, Screener

MODULE = '''\
"""A small module: text and number helpers."""


def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def mean(values):
    if not values:
        return 0.0
    total = 0
    for v in values:
        total += v
    return total / len(values)


def words(text, limit):
    out = []
    for word in text.split():
        if len(out) >= limit:
            break
        out.append(word.lower())
    return out
'''
TESTS = """\
from small import clamp, mean, words


def test_clamp():
    assert clamp(5, 0, 10) == 5
    assert clamp(-1, 0, 10) == 0
    assert clamp(11, 0, 10) == 10


def test_mean():
    assert mean([1, 2, 3]) == 2
    assert mean([]) == 0.0


def test_words():
    assert words("A b C d", 3) == ["a", "b", "c"]
"""


async def throughput(count: int, lanes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        (root / "tests").mkdir(parents=True)
        (root / "small.py").write_text(MODULE)
        (root / "tests" / "test_small.py").write_text(TESTS)
        source = Source("small.py", MODULE)
        mutants = mutants_in(source)[:count]
        ids = ["tests/test_small.py::test_clamp", "tests/test_small.py::test_mean", "tests/test_small.py::test_words"]
        jobs = [
            Job({str(root / f): t for f, t in mutated_sources(m, {"small.py": MODULE}).items()}, ids, [], 5.0)
            for m in mutants
        ]
        print(
            f"{len(jobs)} mutants of a {len(MODULE.splitlines())}-line module, {len(ids)} tests each, {lanes} lane(s)"
        )
        rates = {}
        for design in ("fresh", "fork"):
            async with Screener(design, sys.executable, root, Path(tmp) / f"run-{design}", lanes) as screener:
                started = time.monotonic()
                queue = list(jobs)
                statuses: list[str] = []

                async def lane(slot: object, queue: list = queue, statuses: list[str] = statuses) -> None:
                    while queue:
                        verdict = await slot.screen(queue.pop(0))  # type: ignore[attr-defined]
                        statuses.append(verdict.status)

                async with anyio.create_task_group() as group:
                    for slot in screener.slots:
                        group.start_soon(lane, slot)
                elapsed = time.monotonic() - started
            rates[design] = len(jobs) / elapsed
            killed = sum(1 for s in statuses if s != "ok")
            print(f"  {design:5s}: {rates[design]:6.1f} mutants/s ({elapsed:.2f}s, {killed} timeout/crash)")
        print(f"  fork / fresh = {rates['fork'] / rates['fresh']:.1f}x")


def fix_lines(patch: str) -> tuple[str, list[int]]:
    """The file and the old-side lines a reference patch changes (for an insertion: the line above)."""
    file, lines, old = "", [], 0
    for line in patch.splitlines():
        if line.startswith("--- "):
            file = line[4:].strip().removeprefix("a/")
        elif line.startswith("@@"):
            old = int(re.match(r"@@ -(\d+)", line).group(1))  # type: ignore[union-attr]
        elif line.startswith("-"):
            lines.append(old)
            old += 1
        elif line.startswith("+"):
            lines.append(old - 1)
        else:
            old += 1
    return file, sorted(set(lines))


async def formulas(cases_dir: Path) -> None:
    positions: dict[str, list[float]] = {name: [] for name in localise.FORMULAS}
    names = sorted(p.parent.name for p in cases_dir.glob("*/fix.patch"))
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "project"
            shutil.copytree(cases_dir / name / "project", work)
            run = await run_tests(TestCommand(python=sys.executable), work, Path(tmp) / "base.log")
            failing = [i for i, o in run.outcomes.items() if o.outcome in ("failed", "error")]
            spectrum = (
                await localise.collect(
                    sys.executable,
                    work,
                    Path(tmp) / "run",
                    failing,
                    sorted(run.passing()),
                    longreprs=[o.longrepr for o in run.outcomes.values()],
                )
            ).spectrum
            file, lines = fix_lines((cases_dir / name / "fix.patch").read_text())
            row = []
            for formula in localise.FORMULAS:
                ranked = localise.rank(spectrum, formula, localise.is_test_file)
                position = localise.position_of(ranked, file, lines) or float(len(ranked) + 1)
                positions[formula].append(position)
                row.append(f"{formula}={position:g}")
            print(f"  {name:24s} " + " ".join(row))
    print(f"\n{len(names)} cases: rank of the fix's line (1 = first; ties at their average)")
    for formula, ps in positions.items():
        top1 = sum(p <= 1 for p in ps)
        top3 = sum(p <= 3 for p in ps)
        print(
            f"  {formula:9s} mean {statistics.mean(ps):5.2f}  median {statistics.median(ps):4.1f}  top-1 {top1:2d}  top-3 {top3:2d}"
        )
    print(json.dumps({f: round(statistics.mean(ps), 3) for f, ps in positions.items()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=60)
    parser.add_argument("--lanes", type=int, default=1)
    parser.add_argument("--formulas", type=Path, help="corpus folder: compare the suspiciousness formulas instead")
    args = parser.parse_args()
    if args.formulas:
        anyio.run(formulas, args.formulas)
    else:
        anyio.run(throughput, args.mutants, args.lanes)


if __name__ == "__main__":
    main()
