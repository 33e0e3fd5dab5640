"""Which mutation operators the corpus's repairs came from.

    python benchmarks/operator_participation.py BENCH_JSON [CASES_DIR]

bench.json keeps each run's final diff, not the mutant behind it, so this finds the operator
again: it applies the diff to the case's project, makes every mutant of the changed file with
mutate's registry, and keeps those (or pairs of those) that give the same text. Several
operators can make the same text (`name` and `return_value` for `return x` → `return y`); the
search screens the first tier's before the second's and, within a tier, the one with the higher
prior first, and drops the rest as duplicates, so that one is credited. Prints a Markdown table: operator, repairs it took part in, correct ones.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from explore.generators.mutate.edits import Source, apply_edits
from explore.generators.mutate.operators import REGISTRY, mutants_in

RANK = {op.name: (op.tier, -op.prior, op.name) for op in REGISTRY}  # the first tier is screened first


def final_texts(project: Path, diff: str) -> dict[str, tuple[str, str]]:
    """Changed file → (text before, text after) once the run's diff is applied."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "p"
        shutil.copytree(project, copy)
        subprocess.run(["git", "apply", "-"], input=diff, text=True, cwd=copy, check=True)
        out = {}
        for line in diff.splitlines():
            if line.startswith("+++ b/"):
                name = line[6:]
                out[name] = ((project / name).read_text(), (copy / name).read_text())
        return out


def operators_of(before: str, after: str, name: str) -> list[str]:
    """The operators whose one mutant, or pair of mutants, turns before into after ([] if none)."""
    source = Source(name, before)
    mutants = mutants_in(source)
    singles = [m for m in mutants if apply_edits(before, [e for _, e in m.edits]) == after]
    if singles:
        return [min((m.operator for m in singles), key=RANK.__getitem__)]
    after_lines = set(after.splitlines())
    useful = [
        m
        for m in mutants
        if set(apply_edits(before, [e for _, e in m.edits]).splitlines()) - set(before.splitlines()) <= after_lines
    ]
    for a, b in itertools.combinations(useful, 2):
        edits = [e for _, e in a.edits + b.edits]
        if any(x.start < y.end and y.start < x.end for x, y in itertools.combinations(edits, 2)):
            continue
        if apply_edits(before, edits) == after:
            return sorted((a.operator, b.operator), key=RANK.__getitem__)
    return []


def main(bench_json: Path, cases_dir: Path) -> None:
    results = json.loads(bench_json.read_text())["results"]
    took_part: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    unknown = []
    for result in results:
        verdict = result.get("verdict") or {}
        if not result.get("repaired") or not verdict.get("diff"):
            continue
        found: list[str] = []
        for name, (before, after) in final_texts(cases_dir / result["case"] / "project", verdict["diff"]).items():
            found += operators_of(before, after, name)
        if not found:
            unknown.append(result["case"])
        for op in set(found):
            took_part[op] += 1
            correct[op] += bool(verdict.get("correct"))
    print("| operator | repairs it took part in | of them correct |\n|---|---:|---:|")
    for op in sorted(took_part, key=lambda o: (-took_part[o], o)):
        print(f"| {op} | {took_part[op]} | {correct[op]} |")
    if unknown:
        print(f"\nNo single mutant or pair found for: {', '.join(unknown)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).parent / "cases")
