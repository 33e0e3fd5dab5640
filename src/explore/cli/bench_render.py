"""Show a bench result: a terminal table (rich), bench.md, and a PNG chart (matplotlib)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.table import Table

from ..bench.results import BenchResult, Stats, StrategyStats

if TYPE_CHECKING:
    from matplotlib.axes import Axes  # the bench extra; imported where the chart is drawn

COLUMNS = (
    "runs",
    "repaired",
    "plausible",
    "correct",
    "tests edited",
    "claim ≠ judge",
    "debris",
    "iterations",
    "candidates",
    "median s",
    "total s",
    "tokens",
    "cost $",
)
SHORT = ("correct", "%", "green", "claim", "tests", "≠", "debris", "iter", "cand", "med s", "tot s", "tokens", "$")


def _short(s: Stats) -> list[str]:
    return [
        f"{s.correct}/{s.runs}",
        f"{s.rate:.0f}",
        str(s.plausible),
        str(s.repaired),
        str(s.tests_touched),
        str(s.disagreements),
        str(s.debris),
        str(s.iterations),
        str(s.candidates),
        f"{s.median_s:.1f}",
        f"{s.total_s:.0f}",
        str(s.tokens),
        f"{s.cost_usd:.2f}",
    ]


def _cases(bench: BenchResult) -> str:
    n = len({r.case for r in bench.results})
    return f"{n} case" + ("" if n == 1 else "s")


def _row(s: Stats) -> list[str]:
    pct = f"{s.correct}/{s.runs} ({s.rate:.0f}%)"
    return [
        str(s.runs),
        str(s.repaired),
        str(s.plausible),
        pct,
        str(s.tests_touched),
        str(s.disagreements),
        str(s.debris),
        str(s.iterations),
        str(s.candidates),
        f"{s.median_s:.1f}",
        f"{s.total_s:.1f}",
        str(s.tokens) if s.tokens else "-",
        f"{s.cost_usd:.2f}" if s.cost_usd else "-",
    ]


def table(bench: BenchResult, console: Console) -> None:
    """Per-strategy figures, then correct repairs per defect class and strategy."""
    t = Table(
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
        show_edge=False,
        title=f"explore bench — {_cases(bench)}, agent {bench.agent}, --parallel {bench.parallel}",
    )
    llm = any(s.tokens or s.cost_usd for s in bench.summary.values())
    keep = len(SHORT) if llm else len(SHORT) - 2
    t.add_column(bench.measures, style="bold", no_wrap=True)
    for col in SHORT[:keep]:
        t.add_column(col, justify="right", no_wrap=True)
    for name, stats in bench.summary.items():
        t.add_row(name, *_short(stats)[:keep])
    console.print(t)
    console.print(
        "claim: explore said repaired · green: the judge's own run of the suite · correct: green, tests "
        "untouched, reference checks pass · tests: runs that edited test files · ≠: claim and judge disagree",
        style="dim",
    )
    classes = sorted({k for s in bench.summary.values() for k in s.by_class})
    if len(classes) > 1:
        console.print(
            _per_group(
                bench,
                "correct / runs per defect class",
                "class",
                classes,
                lambda s, k: s.by_class.get(k),
                lambda s: f"{s.correct}/{s.runs}",
            )
        )
    families = _families(bench)
    if families:
        console.print(
            _per_group(
                bench,
                "per family: correct / runs · iterations · candidates · total s",
                "family",
                families,
                lambda s, k: s.by_family.get(k),
                _family_cell,
            )
        )


def _per_group(
    bench: BenchResult,
    title: str,
    heading: str,
    groups: list[str],
    pick: Callable[[StrategyStats, str], Stats | None],
    cell: Callable[[Stats], str],
) -> Table:
    """One row per group (defect class, family), one column per strategy; `-` where a strategy
    has no run of that group."""
    t = Table(box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False, title=title)
    t.add_column(heading, style="bold", no_wrap=True)
    for name in bench.summary:
        t.add_column(name, justify="right")
    for group in groups:
        cells = [pick(bench.summary[n], group) for n in bench.summary]
        t.add_row(group, *[cell(c) if c else "-" for c in cells])
    return t


def _section(title: str, first: str, names: list[str]) -> list[str]:
    """A section's heading and its table's head: one row per `first`, a column per strategy."""
    return ["", f"## {title}", "", f"| {first} | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]


def _families(bench: BenchResult) -> list[str]:
    return sorted({k for s in bench.summary.values() for k in s.by_family})


def _family_cell(s: Stats) -> str:
    return f"{s.correct}/{s.runs} · {s.iterations} it · {s.candidates} c · {s.total_s:.0f}s"


STRATEGY_LETTER = {"conservative": "C", "aggressive": "A", "exploratory": "E", "surgical": "S"}


def iteration_trail(strategies: list[str], runs: Sequence[int] = ()) -> str:
    """Each iteration's strategy as one letter (C A E S), e.g. `CCE`: to see `auto` switching;
    with several runs of the case (their iteration counts), the runs apart: `CC|E`."""
    letters = "".join(STRATEGY_LETTER.get(s, "?") for s in strategies)
    if len(runs) < 2 or sum(runs) != len(letters):
        return letters
    cuts = [sum(runs[:i]) for i in range(len(runs) + 1)]
    return "|".join(letters[a:b] for a, b in itertools.pairwise(cuts))


def markdown(bench: BenchResult, chart: str | None = "bench.png") -> str:
    """bench.md: per strategy, per defect class, per case."""
    names = list(bench.summary)
    lines = [
        "# explore bench",
        "",
        f"Cases: `{bench.cases_dir}` ({len({r.case for r in bench.results})}), agent `{bench.agent}`, "
        f"`--parallel {bench.parallel}`, {bench.jobs} job(s) at a time, started {bench.started_at}, "
        f"took {bench.duration_s:.0f}s.",
        "",
        "*repaired*: explore said the suite is green (exit 0). *plausible*: the judge re-ran the visible "
        "suite on the user's branch and it is green. *correct*: plausible, no test file edited, and the "
        "case's hidden reference checks pass. *claim ≠ judge*: repaired and plausible disagree.",
        "",
        f"## Per {bench.measures}",
        "",
        f"| {bench.measures} | " + " | ".join(COLUMNS) + " |",
        "|---|" + "---:|" * len(COLUMNS),
    ]
    lines += [f"| {n} | " + " | ".join(_row(s)) + " |" for n, s in bench.summary.items()]
    if chart:
        lines += ["", f"![repair rate and median time per {bench.measures}]({chart})"]
    classes = sorted({k for s in bench.summary.values() for k in s.by_class})
    lines += _section("Per defect class (correct / plausible / runs)", "class", names)
    for klass in classes:
        stats = [bench.summary[n].by_class.get(klass) for n in names]
        lines.append(
            f"| {klass} | " + " | ".join(f"{s.correct} / {s.plausible} / {s.runs}" if s else "-" for s in stats) + " |"
        )
    families = _families(bench)
    if families:
        lines += _section("Per family (repaired / correct / runs · iterations · candidates · total s)", "family", names)
        for family in families:
            stats = [bench.summary[n].by_family.get(family) for n in names]
            lines.append(
                f"| {family} | "
                + " | ".join(
                    f"{s.repaired} / {s.correct} / {s.runs} · {s.iterations} it · {s.candidates} c · {s.total_s:.0f}s"
                    if s
                    else "-"
                    for s in stats
                )
                + " |"
            )
    lines += [
        "",
        "## Per case",
        "",
        "Each cell: grade, iterations, the strategy of each iteration (C conservative, A aggressive, "
        "E exploratory, S surgical; `|` between the runs of a history case), wall time.",
        "",
        "| case | class | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    by_key = {(r.case, r.arm): r for r in bench.results}
    for case in dict.fromkeys(r.case for r in bench.results):
        first = next(r for r in bench.results if r.case == case)
        klass = first.family or first.defect_class
        cells = []
        for n in names:
            r = by_key.get((case, n))
            cells.append(
                "-"
                if r is None
                else f"{r.grade}, {r.iterations} it {iteration_trail(r.iteration_strategies, r.run_iterations)}, {r.duration_s:.0f}s"
                + (" ⚠" if not r.agrees or r.error else "")
            )
        lines.append(f"| {case} | {klass} | " + " | ".join(cells) + " |")
    problems = [r for r in bench.results if r.error or r.verdict.debris or not r.agrees or r.verdict.tests_touched]
    if problems:
        lines += ["", "## Notes", ""]
        for r in problems:
            bits = [
                r.error or "",
                "debris: " + ", ".join(r.verdict.debris) if r.verdict.debris else "",
                "tests edited: " + ", ".join(r.verdict.tests_touched) if r.verdict.tests_touched else "",
                f"explore said {r.status}, judge: suite {r.verdict.suite_passed}/{r.verdict.suite_total}"
                if not r.agrees
                else "",
            ]
            lines.append(f"- `{r.case}` [{r.arm}]: " + "; ".join(b for b in bits if b))
    return "\n".join(lines) + "\n"


def chart(bench: BenchResult, path: Path) -> Path:
    """One bar group per strategy: plausible and correct rate (%, left axis), median time (s, right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(bench.summary)
    stats = [bench.summary[n] for n in names]
    xs = list(range(len(names)))
    width = 0.26
    families = _families(bench)
    if families:
        fig, (left, fam) = plt.subplots(2, 1, figsize=(max(7.0, 1.8 * len(names) + 2), 8.5), dpi=120)
        family_panel(fam, bench, names, families)
    else:
        fig, left = plt.subplots(figsize=(max(6.0, 1.8 * len(names) + 2), 4.5), dpi=120)
    right = left.twinx()
    b1 = left.bar(
        [x - width for x in xs],
        [s.plausible_rate for s in stats],
        width,
        label="plausible (suite green) %",
        color="#9ecae1",
    )
    b2 = left.bar(xs, [s.rate for s in stats], width, label="correct (checks pass) %", color="#3182bd")
    b3 = right.bar(
        [x + width for x in xs],
        [s.median_s for s in stats],
        width,
        label="median time (s)",
        color="#fd8d3c",
        hatch="//",
    )
    left.bar_label(b1, fmt="%.0f", fontsize=8)
    left.bar_label(b2, fmt="%.0f", fontsize=8)
    right.bar_label(b3, fmt="%.1f", fontsize=8)
    left.set_ylim(0, 110)
    left.set_ylabel("repair rate (% of cases)")
    right.set_ylim(0, max([s.median_s for s in stats] + [1.0]) * 1.25)
    right.set_ylabel("median wall time per case (s)")
    left.set_xticks(xs, names)
    left.set_title(f"explore bench: {_cases(bench)}, agent {bench.agent}, --parallel {bench.parallel}")
    left.legend(handles=[b1, b2, b3], loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def family_panel(ax: Axes, bench: BenchResult, names: list[str], families: list[str]) -> None:
    """Correct repairs per family (groups) and strategy (bars), iterations as the bar label."""
    width = 0.8 / max(1, len(names))
    for k, name in enumerate(names):
        cells = [bench.summary[name].by_family.get(f) for f in families]
        rates = [100.0 * s.correct / s.runs if s and s.runs else 0.0 for s in cells]
        bars = ax.bar([i - 0.4 + width * (k + 0.5) for i in range(len(families))], rates, width, label=name)
        ax.bar_label(bars, labels=[f"{s.iterations}it" if s else "" for s in cells], fontsize=6)
    ax.set_xticks(range(len(families)), families)
    ax.set_ylim(0, 115)
    ax.set_ylabel("correct (% of the family's cases)")
    ax.set_title("per family: correct repairs (bar) and iterations spent (label)")
    ax.legend(fontsize=7, ncol=len(names), loc="upper center", frameon=False)


NO_CHART = "no chart: matplotlib is not installed; get it with: pip install 'explore-runner[bench]'"


def write_all(bench: BenchResult, out: Path) -> list[Path]:
    """bench.json, bench.md and bench.png in out (the chart only when matplotlib is installed)."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "bench.json"]
    bench.save(written[0])
    png: str | None = "bench.png"
    try:
        written.append(chart(bench, out / "bench.png"))
    except ImportError:
        png = None
    (out / "bench.md").write_text(markdown(bench, png), encoding="utf-8")
    written.append(out / "bench.md")
    return written
