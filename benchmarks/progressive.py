"""Issue 5's acceptance benchmark: test time per iteration with affected-test selection against
full runs, in one script run.

The project. A generated git repo of --modules modules (`mod_XX.py`, flat on sys.path, or
`app/mod_XX.py` with --layout package) and one test file per module, --tests-per-module tests
each (default 60 × 35 = 2,100 tests). Every 5th test is "slow": it busy-waits ~5 ms of CPU.
`mod_07.scale` has a bug (x * 3 instead of x * 2): three tests fail at baseline.

The scripted agent (run through `--agent command`) answers by candidate letter:
  a  the real fix (x * 2)                                   -> green
  b  `x + 2`: fixes the three failing tests, breaks another test of the same module
  c  a no-op edit elsewhere (a comment in mod_33)           -> no change in outcomes

Two `explore run --parallel 3` runs on fresh copies of the same repo:
  selection  the built-in strategies (tests mode "affected-then-full"): each candidate runs the
             tests its change can affect (failing tests + test files importing a changed
             module); only the best is then validated on the full suite before the merge.
  full       a copy of the four built-in strategies with `[tests] mode = "full"` in the
             project's `.explore/strategies/` (they override by name): every candidate runs the
             full suite.

The measure. `[tool.explore] python` points to a tiny wrapper that forks/execs the real
interpreter and records, for each pytest process explore starts, the process's wall time and
its CPU time (user + sys from wait4), keyed by the JSON report file explore passes it — which
names the iteration, the candidate and the kind of run (`affected.report` or `tests.report`).
Test time of an iteration = the sum over every test process of that iteration's candidates
(affected runs + full runs, the winner's full validation included). CPU seconds is the primary
figure: the machine has few cores and three candidates run at once, so a sum of wall times
would also count the contention between them (which full mode, with three full suites at once,
suffers more). Wall seconds are printed too. The candidates' `duration_s` from the JSON summary
is printed for reference only: it covers the agent and the worktree as well as the tests, and
it ends before the winner's full-suite validation (which runs after the fan-out).

Run: /work/venv/bin/python benchmarks/progressive.py [--modules 60] [--tests-per-module 35]
     [--layout flat|package] [--keep]
Target (issue 5): >= 80% less test time per iteration, same final result.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}
TARGET_SAVING = 0.80
BUG_MODULE = 7
NOOP_MODULE = 33
STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"

WRAPPER = """\
#!{python} -S
# Times one interpreter process for the benchmark; transparent to explore otherwise.
import json, os, sys, time
real = {python!r}
args = sys.argv[1:]
report = next((a.split("=", 1)[1] for a in args if a.startswith("--json-report-file=")), None)
start = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execv(real, [real, *args])
_, status, usage = os.wait4(pid, 0)
if report:
    with open({timings!r}, "a") as out:
        out.write(json.dumps({{"report": report, "wall": time.monotonic() - start,
                               "cpu": usage.ru_utime + usage.ru_stime}}) + "\\n")
code = os.waitstatus_to_exitcode(status)
if code < 0:
    os.kill(os.getpid(), -code)
sys.exit(code)
"""

AGENT = """\
import os, pathlib, sys
edits = {edits!r}
action = edits.get(os.environ["EXPLORE_CANDIDATE"])
sys.stdin.read()
if action:
    path = pathlib.Path(action[0])
    path.write_text(path.read_text().replace(action[1], action[2], 1))
"""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def module_path(layout: str, m: int) -> str:
    return f"app/mod_{m:02d}.py" if layout == "package" else f"mod_{m:02d}.py"


def import_name(layout: str, m: int) -> str:
    return f"app.mod_{m:02d}" if layout == "package" else f"mod_{m:02d}"


def generate(root: Path, modules: int, per_module: int, layout: str, python: str, spin_ms: float = 5.0) -> int:
    """The project; returns the number of tests."""
    root.mkdir(parents=True)
    files: dict[str, str] = {
        ".gitignore": "__pycache__/\n",
        "pyproject.toml": f'[tool.pytest.ini_options]\npythonpath = ["."]\n\n[tool.explore]\npython = "{python}"\n',
        "tests/__init__.py": "",
        "tests/helpers.py": textwrap.dedent(f"""\
            import time


            def spin(seconds={spin_ms / 1000!r}):
                end = time.perf_counter() + seconds
                while time.perf_counter() < end:
                    pass
            """),
    }
    if layout == "package":
        files["app/__init__.py"] = ""
    total = 0
    for m in range(modules):
        factor = 3 if m == BUG_MODULE else 2
        files[module_path(layout, m)] = textwrap.dedent(f"""\
            # module {m}
            OFFSET = {m}


            def scale(x):
                return x * {factor}


            def offset(x):
                return x + OFFSET


            def clip(x, low=0, high=100):
                return max(low, min(high, x))
            """)
        lines = [f"from {import_name(layout, m)} import clip, offset, scale", "from tests.helpers import spin", ""]
        tests = [
            ("scale_zero", "assert scale(0) == 0"),
            ("scale_two", "assert scale(2) == 4"),
            ("scale_double", "assert scale(2) + scale(2) == 8"),
            ("scale_list", "assert [scale(2)] == [4]"),
        ]
        for i in range(per_module - len(tests)):
            tests.append(
                (
                    f"offset_{i}",
                    f"assert offset({i}) == {i + m}" if i % 2 else f"assert clip({i * 7}) == {min(100, i * 7)}",
                )
            )
        for i, (name, body) in enumerate(tests):
            slow = "    spin()\n" if i % 5 == 4 else ""
            lines.append(f"\ndef test_{name}():\n{slow}    {body}\n")
        files[f"tests/test_mod_{m:02d}.py"] = "\n".join(lines)
        total += len(tests)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "generated project")
    return total


def full_mode_strategies(repo: Path) -> list[str]:
    """The built-in strategies with `[tests] mode = "full"`, in .explore/strategies/."""
    folder = repo / ".explore" / "strategies"
    folder.mkdir(parents=True)
    with open(repo / ".git" / "info" / "exclude", "a") as out:  # as explore itself excludes it
        out.write("\n.explore/\n")
    names = []
    for source in sorted(STRATEGIES.glob("*.toml")):
        text = source.read_text()
        lines = [('mode = "full"' if line.strip().startswith("mode =") else line) for line in text.splitlines()]
        if not any(line.strip() == 'mode = "full"' for line in lines):
            lines += ["", "[tests]", 'mode = "full"']
        (folder / source.name).write_text("\n".join(lines) + "\n")
        names.append(source.stem)
    return names


def run_explore(repo: Path, agent: str, worktrees: Path, source: str | None = None) -> tuple[int, dict, float, str]:
    env = {**os.environ, "EXPLORE_WORKTREES_DIR": str(worktrees)}
    if source:  # another checkout's explore (its src/ first on the path): the "before" of a comparison
        env["PYTHONPATH"] = source
    env.pop("ANTHROPIC_API_KEY", None)
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "explore",
            "run",
            str(repo),
            "--agent",
            "command",
            "--agent-cmd",
            agent,
            "--parallel",
            "3",
            "--max-iterations",
            "3",
            "--json",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    wall = time.monotonic() - started
    try:
        summary = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit(f"explore printed no JSON summary (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return done.returncode, summary, wall, done.stderr


def read_timings(path: Path) -> list[dict]:
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            parts = Path(row["report"]).parts
            row["iteration"] = next((p for p in parts if p.startswith("iteration-")), "baseline")
            row["candidate"] = next((p.split("-", 1)[1] for p in parts if p.startswith("candidate-")), "-")
            row["kind"] = Path(row["report"]).stem  # affected | tests (full) | baseline…
            rows.append(row)
    return rows


def one_mode(name: str, template: Path, work: Path, agent: str, python_real: str) -> dict:
    repo = work / name / "repo"
    shutil.copytree(template, repo, symlinks=True)
    timings = work / name / "timings.jsonl"
    wrapper = work / name / "python"
    wrapper.write_text(WRAPPER.format(python=python_real, timings=str(timings)))
    wrapper.chmod(0o755)
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(f'python = "{python_real}"', f'python = "{wrapper}"'))
    git(repo, "commit", "-q", "-am", "benchmark interpreter wrapper")
    overridden = full_mode_strategies(repo) if name == "full" else []
    code, summary, wall, stderr = run_explore(repo, agent, work / name / "worktrees")
    rows = read_timings(timings)
    return {
        "name": name,
        "repo": repo,
        "code": code,
        "summary": summary,
        "wall": wall,
        "stderr": stderr,
        "rows": rows,
        "overridden": overridden,
        # the winner's change (the merged commit against its parent; the repos differ only in the
        # benchmark's interpreter path in pyproject.toml)
        "tree": git(repo, "diff", f"{summary['merged_commit']}^", summary["merged_commit"])
        if summary.get("merged_commit")
        else None,
    }


def iteration_figures(result: dict, iteration: str) -> dict:
    rows = [r for r in result["rows"] if r["iteration"] == iteration]
    return {
        "cpu": sum(r["cpu"] for r in rows),
        "wall": sum(r["wall"] for r in rows),
        "runs": sorted((r["candidate"], r["kind"], r["cpu"], r["wall"]) for r in rows),
    }


def plain_suite(template: Path, work: Path, n: int) -> float:
    """The suite's own wall time: one plain `pytest` on a fresh copy, as the user runs it."""
    repo = work / f"plain-{n}"
    shutil.copytree(template, repo, symlinks=True)
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo, capture_output=True, check=False
    )
    wall = time.monotonic() - started
    shutil.rmtree(repo, ignore_errors=True)
    return wall


def ratio_rounds(template: Path, work: Path, agent: str, rounds: int, before: str | None, after: str | None) -> None:
    """Issue 40's figure: explore's whole run (the built-in strategies, three candidates, one right)
    against the plain suite's wall time, interleaved round by round (the machine is shared: the
    ratios of one round are what compare); with --before, another checkout's explore in the same
    round, between the same two suite runs."""
    sources = {"before": before, "after": after} if before else {"after": after}
    ratios: dict[str, list[float]] = {name: [] for name in sources}
    for n in range(rounds):
        suite = plain_suite(template, work, n)
        walls = {}
        for name, source in sources.items():
            repo = work / f"{name}-{n}" / "repo"
            shutil.copytree(template, repo, symlinks=True)
            load = os.getloadavg()[0]
            code, summary, wall, _ = run_explore(repo, agent, work / f"{name}-{n}" / "worktrees", source)
            walls[name] = wall
            its = summary.get("iterations") or []
            timing = its[0].get("timing", {}) if its else {}
            phases = ", ".join(f"{k} {v:.1f}s" for k, v in timing.items() if isinstance(v, (int, float)) and v >= 0.05)
            print(
                f"round {n + 1} {name}: explore {wall:.1f}s, exit {code}, winners {[i.get('winner') for i in its]}, load {load:.1f}"
            )
            print(f"  phases: {phases}")
            for it in its:
                for c in it["candidates"]:
                    print(f"    {it['n']}{c['id']}: {c['status']:<9} {c['pass_rate']:6.2f}%  {c.get('progress') or ''}")
            shutil.rmtree(repo.parent, ignore_errors=True)
        suite_after = plain_suite(template, work, n)
        mean_suite = (suite + suite_after) / 2
        for name, wall in walls.items():
            ratios[name].append(wall / mean_suite)
        print(
            f"round {n + 1}: suite {suite:.1f}s / {suite_after:.1f}s (before/after the runs); "
            + ", ".join(f"{name} {wall / mean_suite:.2f}x" for name, wall in walls.items())
        )
    for name, values in ratios.items():
        values.sort()
        print(
            f"{name}: explore / suite median {values[len(values) // 2]:.2f}x (target <= 2.3x), all {[round(r, 2) for r in values]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=60)
    parser.add_argument("--tests-per-module", type=int, default=35)
    parser.add_argument("--layout", choices=("flat", "package"), default="flat")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--spin-ms", type=float, default=5.0, help="CPU each 5th test busy-waits (ms)")
    parser.add_argument(
        "--ratio", type=int, default=0, metavar="ROUNDS", help="measure explore / the plain suite instead (issue 40)"
    )
    parser.add_argument("--before", metavar="SRC", help="with --ratio: also run the explore of this src/ folder")
    parser.add_argument(
        "--after", metavar="SRC", help="with --ratio: the explore of this src/ folder, not this checkout's"
    )
    args = parser.parse_args()
    if args.modules <= max(BUG_MODULE, NOOP_MODULE):
        sys.exit(f"--modules must be > {max(BUG_MODULE, NOOP_MODULE)}")

    work = Path(tempfile.mkdtemp(prefix="explore-progressive-"))
    try:
        template = work / "template"
        python_real = sys.executable
        total = generate(template, args.modules, args.tests_per_module, args.layout, python_real, args.spin_ms)
        bug, noop = module_path(args.layout, BUG_MODULE), module_path(args.layout, NOOP_MODULE)
        edits = {
            "a": [bug, "return x * 3", "return x * 2"],
            "b": [bug, "return x * 3", "return x + 2"],
            "c": [noop, f"# module {NOOP_MODULE}", f"# module {NOOP_MODULE} (reviewed)"],
        }
        (work / "agent.py").write_text(AGENT.format(edits=edits))
        agent = f"{sys.executable} {work / 'agent.py'}"
        print(
            f"project: {total:,} tests in {args.modules} modules ({args.layout} layout), "
            f"{total // 5:,} slow (~5 ms CPU each); bug in {bug}; 3 candidates (a real fix, "
            f"b fixes the failing tests but breaks another in the same module, c no-op edit in {noop})"
        )
        if args.ratio:
            ratio_rounds(template, work, agent, args.ratio, args.before, args.after)
            return
        results = {}
        for name in ("selection", "full"):
            results[name] = one_mode(name, template, work, agent, python_real)
            r = results[name]
            s = r["summary"]
            print(
                f"\n[{name}] exit {r['code']}, status {s['status']}, wall {r['wall']:.1f}s, "
                f"baseline {s['baseline']['passed']}/{s['baseline']['total']} -> final {s['final']['passed']}/{s['final']['total']}"
                + (f"; strategies overridden with mode=full: {', '.join(r['overridden'])}" if r["overridden"] else "")
            )
            base = iteration_figures(r, "baseline")
            print(f"  baseline test processes: {len(base['runs'])}, {base['cpu']:.2f} s CPU, {base['wall']:.2f} s wall")
            for it in s["iterations"]:
                fig = iteration_figures(r, f"iteration-{it['n']}")
                print(
                    f"  iteration {it['n']} ({it['strategy']}): winner {it['winner']}, pass rate {it['pass_rate']:.2f}%"
                )
                for c in it["candidates"]:
                    print(
                        f"    candidate {c['id']}: {c['status']:<9} {c['pass_rate']:6.2f}%  duration_s {c['duration_s']:6.2f}  "
                        f"{c.get('progress') or ''}"
                    )
                for cid, kind, cpu, wall in fig["runs"]:
                    label = "affected" if kind == "affected" else "full suite"
                    print(f"    test process  {cid} {label:<10} {cpu:6.2f} s CPU  {wall:6.2f} s wall")
                print(
                    f"    iteration test time: {fig['cpu']:.2f} s CPU, {fig['wall']:.2f} s wall "
                    f"({len(fig['runs'])} test processes)"
                )

        sel, full = results["selection"], results["full"]
        n_iter = max(len(sel["summary"]["iterations"]), len(full["summary"]["iterations"]))
        print(
            "\nper-iteration test time (sum over every test process of the iteration's candidates; "
            "CPU = user+sys of the pytest processes, wall = their summed wall times)"
        )
        print(
            f"  {'iteration':<10} {'selection CPU':>14} {'full CPU':>10} {'saving':>8}   {'selection wall':>15} {'full wall':>10} {'saving':>8}"
        )
        savings = []
        for n in range(1, n_iter + 1):
            a, b = iteration_figures(sel, f"iteration-{n}"), iteration_figures(full, f"iteration-{n}")
            cpu_saving = 1 - a["cpu"] / b["cpu"] if b["cpu"] else float("nan")
            wall_saving = 1 - a["wall"] / b["wall"] if b["wall"] else float("nan")
            savings.append(cpu_saving)
            print(
                f"  {n:<10} {a['cpu']:>13.2f}s {b['cpu']:>9.2f}s {cpu_saving:>8.1%}   {a['wall']:>14.2f}s {b['wall']:>9.2f}s {wall_saving:>8.1%}"
            )
            if b["cpu"]:
                print(f"  ratio selection/full: {a['cpu'] / b['cpu']:.3f} (CPU), {a['wall'] / b['wall']:.3f} (wall)")
        same = (
            sel["code"] == full["code"]
            and sel["summary"]["status"] == full["summary"]["status"]
            and sel["summary"]["final"] == full["summary"]["final"]
            and [i["winner"] for i in sel["summary"]["iterations"]]
            == [i["winner"] for i in full["summary"]["iterations"]]
            and sel["tree"] == full["tree"]
        )
        print(
            f"same final result (exit code, status, final counts, winners, merged diff): {'yes' if same else 'NO'}"
            f" — selection: exit {sel['code']} {sel['summary']['status']} merged diff {len(str(sel['tree']))} chars; "
            f"full: exit {full['code']} {full['summary']['status']} merged diff {len(str(full['tree']))} chars, identical: {sel['tree'] == full['tree']}"
        )
        worst = min(savings) if savings else float("nan")
        met = worst >= TARGET_SAVING
        print(f"target >= {TARGET_SAVING:.0%} less test time per iteration: {'met' if met else 'MISSED'} ({worst:.1%})")
        if not met:
            import re

            wide = [
                f"{it['n']}{c['id']}: {m.group(0)}"
                for it in sel["summary"]["iterations"]
                for c in it["candidates"]
                for m in [re.search(r"affected ([\d,]+)/([\d,]+)", c.get("progress") or "")]
                if m and int(m.group(2).replace(",", "")) >= 0.9 * total
            ]
            if wide:
                print(
                    f"  why: the affected runs selected (nearly) the whole suite ({'; '.join(wide)}): the static import\n"
                    f"  map matched every test file (see the package-layout bug in src/explore/decide/affected.py), so each\n"
                    f"  candidate ran the full suite as its 'affected' run and the winner ran it once more to validate."
                )
            first_full = [r for r in sel["rows"] if r["iteration"] == "iteration-1" and r["kind"] == "tests"]
            full_cost = iteration_figures(full, "iteration-1")["cpu"] / max(
                1, len(iteration_figures(full, "iteration-1")["runs"])
            )
            print(
                f"  why: the winner must be validated on the full suite before it is merged (DESIGN: a selection\n"
                f"  mistake may cost time, never a wrong merge). That one full run ({len(first_full)} here) costs about\n"
                f"  {full_cost:.2f} s CPU, a third of full mode's three full runs, so with 3 candidates the saving\n"
                f"  cannot exceed 1 - 1/3 = 66.7% whatever the selection does; the affected runs add their own\n"
                f"  interpreter start-up and collection on top. 80% needs >= 5 candidates per iteration, or an\n"
                f"  iteration whose candidates all fail their affected tests (no validation at all)."
            )
        if not same:
            print(sel["stderr"][-2000:], full["stderr"][-2000:], sep="\n")
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
