"""Issue 14's benchmark: explore on real libraries, against the time of their own suites.

    python benchmarks/realworld/build.py            # once: builds the cases (see its docstring)
    python benchmarks/realworld.py [--only NAME] [--parallel 3] [--json OUT] [--explore PATH]
    python benchmarks/realworld.py --render OUT.json [OUT2.json ...]   # the tables again, from saved results

For every built case (CACHE/cases/NAME): a fresh copy of its repo; the suite timed as a user
runs it (`python -m pytest -q` in the case's venv) just before and just after explore, in the
same process, the mean of the two being "the suite's own time"; then
`explore run --agent mutate --parallel N --json` (or `--agent A --agent-cmd CMD`) with the case's venv
active (VIRTUAL_ENV), timed.

Judged here, not by explore's word: **repaired** = the tip of the branch explore moved passes
every test the injected bug broke (run in a `git archive` export of it) and no file under the
case's test paths differs from the initial commit. **exact** = the bug's line reads as the
original again.

Phases (baseline; propose, of which coverage, prepare and screening; fan-out; validation, of which
the final confirmation; merge): from each iteration's `timing` in the JSON summary when explore
writes it; otherwise from the run's own records in .explore/runs/<id>/ — the state's start time and
the modification times of its logs, and mutate's search.json (`coverage_s`, `elapsed_s`) — marked
"(from logs)". The phase table gives each phase's seconds and the baseline's over the suite's own
time ("baseline / suite"). CPU seconds (user + sys of the child processes, from getrusage) are
recorded beside the wall times: on a shared machine they move less with the load.

Bytecode: this project's environment sets PYTHONDONTWRITEBYTECODE=1 and installs explore editable,
so every explore start compiled its whole source (0.35 s of a 1.07 s start's CPU, median of 7 at
load 13), which a pip install never does. Before measuring, the explore beside this Python gets its
bytecode (`compileall` on its package; `--source-only` keeps the old way); an `--explore` is run as
it is (compile its source yourself for a like-for-like comparison).

`--explore PATH` runs another explore (e.g. an older checkout's venv) under the same harness.
Given twice or more (before, after), each case runs under every one of them in turn, one right
after the other, the order rotating from case to case (case 1: A B, case 2: B A, …), so the
machine's load drifts over all alike; the tables and medians are then printed per explore, with the
ratio of each case's ratios (`--render` does the same for saved results holding an `explore` field).

One command each, for the issue's acceptance (floor median ≤ 3.5×, mutate median ≤ 5.5×, 10/10):

    python benchmarks/realworld.py --floor --json /tmp/realworld-floor.json    # ~5 min quiet (estimated)
    python benchmarks/realworld.py --json /tmp/realworld-mutate.json           # ~10 min quiet (estimated)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "realworld"))
from build import DEFAULT_CACHE, pythonpath

PHASES = ("baseline", "propose", "coverage", "prepare", "screening", "fanout", "validation", "confirmation", "merge")
SHOWN = ("baseline", "propose", "screening", "fanout", "validation", "confirmation", "merge")
"""The phase table's columns (coverage and prepare stay in the JSON: part of propose)."""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def suite_seconds(python: str, repo: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the suite as a user runs it."""
    env = {**os.environ, "PYTHONPATH": pythonpath(repo)}
    env.pop("VIRTUAL_ENV", None)
    start, cpu = time.monotonic(), children_cpu()
    subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo, env=env, capture_output=True)
    return time.monotonic() - start, children_cpu() - cpu


def explore_bin() -> str:
    beside = Path(sys.executable).parent / "explore"
    return str(beside) if beside.exists() else (shutil.which("explore") or "explore")


def phases_from_summary(summary: dict) -> dict[str, float] | None:
    timings = [it.get("timing") for it in summary.get("iterations", [])]
    if not timings or any(t is None for t in timings):
        return None
    return {p: round(sum(t.get(p, 0.0) for t in timings), 2) for p in PHASES}


def phases_from_logs(run_dir: Path) -> dict[str, float]:
    """What main's records allow: the baseline ends when its last log is written; mutate's
    search.json holds its coverage and whole search time; the rest of each iteration (its
    candidates' fan-out and validation, which main does not tell apart) is what remains."""
    state = json.loads((run_dir / "state.json").read_text())
    started = state["started_at"]
    baseline_end = max((p.stat().st_mtime for p in run_dir.glob("baseline*.log")), default=started)
    out = dict.fromkeys(PHASES, 0.0)
    out["baseline"] = baseline_end - started
    for search in run_dir.glob("iteration-*/mutate/search.json"):
        data = json.loads(search.read_text())
        out["coverage"] += data.get("coverage_s", 0.0)
        out["screening"] += data.get("elapsed_s", 0.0) - data.get("coverage_s", 0.0)
    rest = state["duration_s"] - out["baseline"] - out["coverage"] - out["screening"]
    out["propose"] = out["coverage"] + out["screening"]
    out["fanout"] = max(rest, 0.0)  # fan-out + validation + merge + the run's own bookkeeping
    return {p: round(v, 2) for p, v in out.items()}


def judge(case: dict, repo: Path, initial: str) -> tuple[bool, bool, list[str]]:
    """(repaired, exact, test files touched)."""
    changed = subprocess.run(
        ["git", "diff", "--name-only", initial, "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.split()
    touched = [p for p in changed if any(p == t.rstrip("/") or p.startswith(t) for t in case["test_paths"])]
    with tempfile.TemporaryDirectory() as scratch:
        export = Path(scratch) / "tree"
        export.mkdir()
        archive = Path(scratch) / "tree.tar"
        subprocess.run(["git", "archive", "-o", str(archive), "HEAD"], cwd=repo, check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(export, filter="data")
        env = {**os.environ, "PYTHONPATH": pythonpath(export)}
        env.pop("VIRTUAL_ENV", None)
        report = Path(scratch) / "report.json"
        subprocess.run(
            [
                case["python"],
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--json-report",
                f"--json-report-file={report}",
                *case["failing_by_bug"],
            ],
            cwd=export,
            env=env,
            capture_output=True,
        )
        outcomes = (
            {t["nodeid"]: t["outcome"] for t in json.loads(report.read_text()).get("tests", [])}
            if report.exists()
            else {}
        )
        lines = (export / case["bug"]["path"]).read_text().splitlines()
    passes = all(outcomes.get(t) == "passed" for t in case["failing_by_bug"])
    exact = len(lines) >= case["bug"]["line"] and lines[case["bug"]["line"] - 1] == case["bug"]["original"]
    return passes and not touched, exact, touched


def run_case(
    folder: Path,
    parallel: int,
    timeout: float,
    keep: Path | None,
    floor: bool = False,
    explore: str | None = None,
    agent_args: tuple[str, ...] = ("--agent", "mutate"),
) -> dict:
    case = json.loads((folder / "case.json").read_text())
    with tempfile.TemporaryDirectory(prefix=f"realworld-{case['name']}-") as scratch:
        repo, timing_copy = Path(scratch) / "repo", Path(scratch) / "suite"
        shutil.copytree(folder / "repo", repo, symlinks=True)
        shutil.copytree(folder / "repo", timing_copy, symlinks=True)
        initial = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        suite_before, suite_cpu_before = suite_seconds(case["python"], timing_copy)
        venv = str(Path(case["python"]).parent.parent)
        env = {**os.environ, "VIRTUAL_ENV": venv, "PATH": f"{venv}/bin{os.pathsep}{os.environ.get('PATH', '')}"}
        start = time.monotonic()
        agent = (
            ["--agent", "command", "--agent-cmd", f"git apply {folder / 'fix.patch'}", "--parallel", "1"]
            if floor
            else [*agent_args, "--parallel", str(parallel)]
        )
        load = os.getloadavg()[0]
        cpu = children_cpu()
        process = subprocess.Popen(
            [explore or explore_bin(), "run", *agent, "--json", str(repo)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
            exit_code: int | None = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # explore and its workers, tests and worktree processes
            stdout, stderr = process.communicate()
            exit_code = None
        wall = time.monotonic() - start
        explore_cpu = children_cpu() - cpu
        suite_after, suite_cpu_after = suite_seconds(case["python"], timing_copy)
        suite = (suite_before + suite_after) / 2
        try:
            summary = json.loads(stdout)
        except json.JSONDecodeError:
            summary = {}
        runs = sorted((repo / ".explore" / "runs").glob("*/state.json"))
        run_dir = (
            repo / ".explore" / "runs" / summary["run_id"]
            if summary.get("run_id")
            else (runs[-1].parent if runs else None)
        )
        phases, source = phases_from_summary(summary), "timing"
        if phases is None and run_dir and (run_dir / "state.json").exists():  # a killed run: its state holds the same
            state = json.loads((run_dir / "state.json").read_text())
            phases = phases_from_summary(state) if state.get("iterations") else None
            if phases is None:
                phases, source = phases_from_logs(run_dir), "logs"
        repaired, exact, touched = judge(case, repo, initial)
        report = (run_dir / "report.md").read_text() if run_dir and (run_dir / "report.md").exists() else ""
        if keep:
            target = keep / case["name"]
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            (target / "summary.json").write_text(stdout)
            (target / "stderr.txt").write_text(stderr)
            (target / "report.md").write_text(report)
    return {
        "case": case["name"],
        "library": f"{case['library']} {case['version']}",
        "kind": case["bug"]["kind"],
        "tests": case["tests"],
        "broken": len(case["failing_by_bug"]),
        "status": summary.get("status", "timeout" if exit_code is None else f"exit {exit_code}"),
        "exit_code": exit_code,
        "repaired": repaired,
        "exact": exact,
        "tests_touched": touched,
        "iterations": len(summary.get("iterations", [])),
        "suite_s": round(suite, 2),
        "suite_before_s": round(suite_before, 2),
        "suite_after_s": round(suite_after, 2),
        "explore_s": round(wall, 2),
        "ratio": round(wall / suite, 2) if suite else None,
        "suite_cpu_s": round((suite_cpu_before + suite_cpu_after) / 2, 2),
        "explore_cpu_s": round(explore_cpu, 2),
        "phases": phases,
        "phases_from": source if phases else None,
        "notes": [it.get("generator_note") for it in summary.get("iterations", []) if it.get("generator_note")],
        "stop_reason": summary.get("stop_reason"),
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
    }


def baseline_ratio(r: dict) -> float | None:
    ph = r.get("phases") or {}
    return round(ph["baseline"] / r["suite_s"], 2) if ph.get("baseline") and r.get("suite_s") else None


def render(results: list[dict]) -> str:
    """The outcome table (repaired, × the suite), then the phase table (seconds per phase)."""
    rows = [
        "| case | tests | broken | repaired | exact | iters | suite s | explore s | × suite | baseline / suite "
        "| CPU: suite s | CPU: explore s | load |",
        "|---|---:|---:|:-:|:-:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        base = baseline_ratio(r)
        load = r.get("load_average") or []
        rows.append(
            f"| {r['case']} | {r['tests']} | {r['broken']} | {'yes' if r['repaired'] else 'NO'} "
            f"| {'yes' if r['exact'] else 'no'} | {r['iterations']} | {r['suite_s']:.1f} | {r['explore_s']:.1f} "
            f"| {r['ratio']:.1f}× | {f'{base:.2f}×' if base is not None else '–'} "
            f"| {r.get('suite_cpu_s', 0):.1f} | {r.get('explore_cpu_s', 0):.1f} | {'–'.join(f'{x:.1f}' for x in load)} |"
        )
    ratios = [r["ratio"] for r in results if r["ratio"]]
    bases = [b for b in map(baseline_ratio, results) if b is not None]
    total_explore = sum(r["explore_s"] for r in results)
    rows.append(
        f"| **total** | {sum(r['tests'] for r in results)} | {sum(r['broken'] for r in results)} "
        f"| **{sum(r['repaired'] for r in results)}/{len(results)}** | {sum(r['exact'] for r in results)}/{len(results)} "
        f"| {sum(r['iterations'] for r in results)} | {sum(r['suite_s'] for r in results):.1f} | {total_explore:.1f} "
        f"| median {statistics.median(ratios) if ratios else 0:.1f}×, max {max(ratios, default=0):.1f}× "
        f"| median {statistics.median(bases) if bases else 0:.2f}×, max {max(bases, default=0):.2f}× "
        f"| {sum(r.get('suite_cpu_s', 0) for r in results):.1f} | {sum(r.get('explore_cpu_s', 0) for r in results):.1f} | |"
    )
    phase_rows = [
        "| case | suite s | " + " | ".join(SHOWN) + " | baseline / suite |",
        "|---|" + "---:|" * (len(SHOWN) + 2),
    ]
    for r in results:
        ph = r["phases"] or {}
        mark = "" if r["phases_from"] != "logs" else "*"
        base = baseline_ratio(r)
        phase_rows.append(
            f"| {r['case']} | {r['suite_s']:.2f} | "
            + " | ".join(f"{ph.get(p, 0):.2f}{mark}" if ph else "–" for p in SHOWN)
            + f" | {f'{base:.2f}×' if base is not None else '–'} |"
        )
    totals = {p: sum((r["phases"] or {}).get(p, 0) for r in results) for p in SHOWN}
    phase_rows.append(
        f"| **total** | {sum(r['suite_s'] for r in results):.1f} | "
        + " | ".join(f"{totals[p]:.1f} ({100 * totals[p] / total_explore if total_explore else 0:.0f}%)" for p in SHOWN)
        + " | |"
    )
    lines = ["\n".join(rows), "", "\n".join(phase_rows)]
    lines.append("propose holds mutate's coverage, preparation and screening; validation holds the final confirmation.")
    if any(r["phases_from"] == "logs" for r in results):
        lines.append(
            "* from the run's logs (no `timing` in the summary): fan-out holds fan-out, validation and merge together."
        )
    for r in results:
        if not r["repaired"]:
            why = r["notes"][-1] if r["notes"] else r["stop_reason"] or r["status"]
            touched = f"; test files touched: {', '.join(r['tests_touched'])}" if r["tests_touched"] else ""
            lines.append(f"- {r['case']} not repaired ({r['status']}, {r['iterations']} iterations): {why}{touched}")
    return "\n".join(lines)


def render_all(results: list[dict]) -> str:
    """render's tables, once per explore when the results hold several, then each case's ratio
    under every explore side by side with their medians."""
    names = list(dict.fromkeys(r.get("explore") for r in results))
    if len(names) < 2:
        return render(results)
    parts = [f"### {name}\n\n{render([r for r in results if r.get('explore') == name])}" for name in names]
    cases = list(dict.fromkeys(r["case"] for r in results))
    by = {(r["case"], r.get("explore")): r for r in results}
    rows = ["| case | " + " | ".join(str(n) for n in names) + " |", "|---|" + "---:|" * len(names)]
    for case in cases:
        cells = []
        for n in names:
            r = by.get((case, n))
            cells.append(f"{r['ratio']:.2f}×{'' if r['repaired'] else ' NOT repaired'}" if r and r["ratio"] else "–")
        rows.append(f"| {case} | " + " | ".join(cells) + " |")
    medians = []
    for n in names:
        ratios = [r["ratio"] for r in results if r.get("explore") == n and r["ratio"]]
        repaired = sum(r["repaired"] for r in results if r.get("explore") == n)
        count = sum(1 for r in results if r.get("explore") == n)
        medians.append(f"**median {statistics.median(ratios) if ratios else 0:.2f}×, {repaired}/{count} repaired**")
    rows.append("| **median** | " + " | ".join(medians) + " |")
    return "\n\n".join([*parts, "### Side by side (× the suite)", "\n".join(rows)])


def compile_explore() -> str:
    """Bytecode for the explore package this Python imports (see the docstring); what was done."""
    import importlib.util

    spec = importlib.util.find_spec("explore")
    if spec is None or not spec.submodule_search_locations:
        return "explore's package not found: run from source"
    package = Path(next(iter(spec.submodule_search_locations)))
    done = subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], capture_output=True)
    return f"{'compiled' if done.returncode == 0 else 'could not compile'} explore's bytecode in {package}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--only", action="append", default=[], help="run only this case (repeatable)")
    parser.add_argument("--parallel", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per explore run")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--keep", type=Path, help="keep each run's summary, progress and report here")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="the floor: an agent that applies the case's own fix at once (`--agent command`, one "
        "candidate), so the run is explore's fixed costs alone — baseline, one validation, merge",
    )
    parser.add_argument(
        "--agent",
        default="mutate",
        help="the generator (default mutate): a chain such as `mutate,command` measures what a chain headed by mutate costs",
    )
    parser.add_argument("--agent-cmd", help="with --agent command (or a chain holding it): the agent's command")
    parser.add_argument(
        "--explore",
        action="append",
        default=[],
        help="the explore executable to run (default: the one beside this Python); repeat to compare, "
        "interleaved case by case",
    )
    parser.add_argument(
        "--source-only",
        action="store_true",
        help="do not compile the explore beside this Python first (every start then compiles its source)",
    )
    parser.add_argument("--render", type=Path, nargs="+", help="print the tables of saved results (--json files)")
    args = parser.parse_args()
    if args.render:
        print(render_all([r for path in args.render for r in json.loads(path.read_text())["results"]]))
        return 0
    folders = (
        sorted(p for p in (args.cache / "cases").iterdir() if (p / "case.json").exists())
        if (args.cache / "cases").is_dir()
        else []
    )
    folders = [f for f in folders if not args.only or f.name in args.only]
    if not folders:
        print(f"no built cases in {args.cache / 'cases'}: run benchmarks/realworld/build.py first", file=sys.stderr)
        return 2
    if not args.explore and not args.source_only:
        print(compile_explore(), file=sys.stderr, flush=True)
    results = []
    explores: list[str | None] = list(args.explore) or [None]
    for i, folder in enumerate(folders):
        agent_args = ("--agent", args.agent, *(("--agent-cmd", args.agent_cmd) if args.agent_cmd else ()))
        for explore in explores[i % len(explores) :] + explores[: i % len(explores)]:  # the order rotates
            keep = args.keep / Path(explore).parent.name if args.keep and explore and len(explores) > 1 else args.keep
            r = run_case(folder, args.parallel, args.timeout, keep, args.floor, explore, agent_args)
            if len(explores) > 1:
                r["explore"] = explore
            results.append(r)
            print(
                f"{r['case']}{f' [{explore}]' if len(explores) > 1 else ''}: "
                f"{'repaired' if r['repaired'] else 'NOT repaired'} ({r['status']}), explore {r['explore_s']:.1f} s "
                f"= {r['ratio']}× the suite's {r['suite_s']:.1f} s; phases {r['phases']} ({r['phases_from']}); "
                f"load average {r['load_average']}",
                file=sys.stderr,
                flush=True,
            )
        if args.json:  # after every case: a run cut short keeps what it measured
            args.json.write_text(
                json.dumps(
                    {
                        "load_average": os.getloadavg(),
                        "parallel": args.parallel,
                        "floor": args.floor,
                        "agent": args.agent,
                        "explores": explores,
                        "results": results,
                    },
                    indent=2,
                )
                + "\n"
            )
    print(render_all(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
