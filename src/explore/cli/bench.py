"""The `explore bench` click command: options in, runs fanned out, figures out."""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import click

from .helptext import BENCH_EXAMPLES, BENCH_GROUPS, GroupedCommand

BUILT_IN = ("auto", "conservative", "aggressive", "exploratory", "surgical")


class _BenchCommand(GroupedCommand):
    groups = BENCH_GROUPS


@click.command(cls=_BenchCommand, epilog=BENCH_EXAMPLES)
@click.argument("cases_dir", required=False, default="benchmarks/cases", type=click.Path(path_type=Path))
@click.option(
    "--strategy",
    "strategies",
    multiple=True,
    help="Strategy to measure; repeat for several (default: auto and the four built-ins).",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    help="Fix generator: mutate | anthropic | command | auto | a named agent (default mutate). Given several "
    "times: the agents are measured against each other (each with --strategy, default auto).",
)
@click.option("--agent-cmd", default=None, help="For --agent command: the external agent's shell command.")
@click.option("--parallel", type=int, default=3, show_default=True, help="Candidates per iteration in each run.")
@click.option("--jobs", type=int, default=None, help="Cases at once (default: cores // --parallel, at least 1).")
@click.option("--case", "only", multiple=True, help="Only this case (repeatable).")
@click.option("--case-timeout", type=float, default=1800.0, show_default=True, help="Seconds before one run is killed.")
@click.option("--json", "as_json", is_flag=True, help="Print bench.json on stdout; table and progress go to stderr.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder for bench.json, bench.md, bench.png (default: .explore/bench/<time>).",
)
@click.option(
    "--compare",
    nargs=2,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    metavar="OLD NEW",
    help="Print the cases that got better or worse between two bench.json files; run nothing.",
)
def bench(
    cases_dir: Path,
    strategies: tuple[str, ...],
    agents: tuple[str, ...],
    agent_cmd: str | None,
    parallel: int,
    jobs: int | None,
    only: tuple[str, ...],
    case_timeout: float,
    as_json: bool,
    out: Path | None,
    compare: tuple[Path, Path] | None,
) -> None:
    """Measure which strategy repairs best: run explore on every case of CASES_DIR (default
    benchmarks/cases) with each strategy in scratch copies, judge each result independently
    (suite green, reference checks, tests untouched, debris), and write bench.json, bench.md and a chart."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..bench import compare as comparing
    from ..bench.corpus import load_corpus
    from ..bench.results import BenchResult, CaseResult, aggregate
    from ..bench.runner import BenchConfig, default_jobs, run_all
    from ..generators import NAMES, resolve_agent
    from ..model.errors import ExploreError
    from . import bench_render as render
    from .live import make_console

    err = make_console(stderr=True)
    arms = list(dict.fromkeys(agents)) if len(set(agents)) > 1 else []
    """Several agents: they are what is measured (each with one strategy), not the strategies."""
    agent = agents[0] if agents else "mutate"
    if arms and len(set(strategies)) > 1:
        _usage(
            "measure several agents with one --strategy (or none: auto), or several strategies with one --agent",
            as_json,
        )
    if compare:
        try:
            old, new = (BenchResult.load(p) for p in compare)
        except (OSError, ValueError) as exc:
            _usage(f"cannot read {compare}: {exc}", as_json)
        click.echo("\n".join(comparing.report(old, new)))
        return
    if parallel < 1 or (jobs is not None and jobs < 1):
        _usage("--parallel and --jobs must be at least 1", as_json)
    try:
        for each in arms or [agent]:  # a missing key or agent command: say so once, not once per case
            if all(m in NAMES or m == "auto" for m in each.split(",")):  # others: each case's own table
                resolve_agent(each, agent_cmd)
        cases = load_corpus(cases_dir, list(only))
    except ExploreError as exc:
        _usage(str(exc), as_json)
    names = arms or list(dict.fromkeys(strategies)) or list(BUILT_IN)
    cores = os.cpu_count() or 1
    fit = default_jobs(parallel, cores)
    if jobs is None:
        jobs = fit
    elif jobs > fit:
        err.print(f"--jobs {jobs} × --parallel {parallel} would oversubscribe {cores} cores; using --jobs {fit}")
        jobs = fit
    extra = ["--agent-cmd", agent_cmd] if agent_cmd else []
    config = BenchConfig(
        agent=agent,
        agents=bool(arms),
        strategy=strategies[0] if strategies else "auto",
        parallel=parallel,
        jobs=jobs,
        case_timeout=case_timeout,
        extra_args=extra,
    )
    started, t0 = datetime.now(timezone.utc).isoformat(timespec="seconds"), time.monotonic()
    columns = (
        TextColumn("[bold]bench"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task("", total=len(cases) * len(names))

        def done(r: CaseResult) -> None:
            progress.update(task, advance=1, description=f"{r.case} [{r.arm}] {r.grade}")

        results = run_all(cases, names, config, on_done=done)
    result = BenchResult(
        cases_dir=str(cases_dir),
        agent=", ".join(arms) if arms else agent,
        parallel=parallel,
        jobs=jobs,
        strategies=names,
        measures="agent" if arms else "strategy",
        started_at=started,
        duration_s=round(time.monotonic() - t0, 1),
        results=results,
        summary=aggregate(results, names),
    )
    folder = out or Path(".explore") / "bench" / started.replace(":", "")
    written = render.write_all(result, folder)
    render.table(result, err if as_json else make_console())
    err.print("wrote " + ", ".join(str(p) for p in written))
    if not any(p.suffix == ".png" for p in written):
        err.print(render.NO_CHART, markup=False, highlight=False, soft_wrap=True)
    if as_json:
        click.echo(result.model_dump_json())
    sys.exit(1 if any(r.error for r in results) else 0)


def _usage(message: str, as_json: bool) -> None:
    import json

    if as_json:
        click.echo(json.dumps({"status": "error", "exit_code": 2, "error": message}))
    click.echo(f"explore: error: {message}", err=True)
    sys.exit(2)
