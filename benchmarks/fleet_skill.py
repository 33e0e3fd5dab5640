"""Issue 41's measurement: two command agents of different skill on the benchmark corpus, alone and
as a fleet, and `--deal auto` learning which one wins in a repository.

The agents are oracles limited to one defect class each: `fix-off-by-one` applies a case's
reference fix only when the case's class is off_by_one, `fix-comparison` only for
wrong_comparison (it recognises the case by the reference patch applying cleanly: it knows
nothing else). On the ten cases of those two classes:

1. `explore bench --agent fix-off-by-one --agent fix-comparison` (each agent alone, per case);
2. the fleet, `explore run --agent fix-off-by-one --agent fix-comparison --parallel 2`, per case,
   through the bench's own runner and judge (bench/runner.run_all: scratch copy, explore run,
   the judge's verdict on the tree it left);
3. one off_by_one repository broken and repaired RUNS times by the fleet with --parallel 4: the
   candidates each agent is dealt per run (`--deal auto`).

Usage: python benchmarks/fleet_skill.py [--runs 5] [--out benchmarks/results/issue41-fleet.json]"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib

from explore.bench.corpus import load_corpus
from explore.bench.results import aggregate
from explore.bench.runner import BenchConfig, run_all

CORPUS = Path(__file__).resolve().parent / "cases"
SKILLS = {"fix-off-by-one": "off_by_one", "fix-comparison": "wrong_comparison"}
FLEET = [flag for agent in SKILLS for flag in ("--agent", agent)]
ORACLE = """\
import pathlib, subprocess, sys, tomllib
corpus, skill = pathlib.Path(sys.argv[1]), sys.argv[2]
for case in sorted(corpus.iterdir()):
    toml = case / "case.toml"
    if not toml.is_file() or tomllib.loads(toml.read_text())["class"] != skill:
        continue
    patch = str(case / "fix.patch")
    if subprocess.run(["git", "apply", "--check", patch], capture_output=True).returncode == 0:
        subprocess.run(["git", "apply", patch], check=True)
        break
"""


def cases() -> list[Path]:
    return [c for c in sorted(CORPUS.iterdir()) if (c / "case.toml").is_file() and _class(c) in SKILLS.values()]


def _class(case: Path) -> str:
    return str(tomllib.loads((case / "case.toml").read_text())["class"])


def agents_config(oracle: Path) -> str:
    return "".join(
        f'\n[tool.explore.agents.{name}]\ncmd = "{sys.executable} {oracle} {CORPUS} {skill}"\n'
        for name, skill in SKILLS.items()
    )


def copy_cases(into: Path, oracle: Path) -> Path:
    """The chosen cases, each project's pyproject.toml given the two named agents."""
    for case in cases():
        shutil.copytree(case, into / case.name)
        with (into / case.name / "project" / "pyproject.toml").open("a") as f:
            f.write("\n[tool.explore]" + agents_config(oracle))
    return into


def explore(*args: str, cwd: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "explore", *args], cwd=cwd, capture_output=True, text=True)
    line = next((out for out in reversed(done.stdout.splitlines()) if out.startswith("{")), "{}")
    return {"exit": done.returncode, "summary": json.loads(line), "stderr": done.stderr}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def fresh_repo(case: Path, into: Path) -> Path:
    repo = into / case.name
    shutil.copytree(case / "project", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "case")
    return repo


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/issue41-fleet.json"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="explore-fleet-"))
    oracle = work / "oracle.py"
    oracle.write_text(ORACLE)
    env_root = copy_cases(work / "cases", oracle)
    figures: dict = {"cases": [c.name for c in cases()]}
    bench = subprocess.run(
        [
            sys.executable,
            "-m",
            "explore",
            "bench",
            str(env_root),
            *FLEET,
            "--parallel",
            "2",
            "--json",
            "--out",
            str(work / "bench"),
        ],
        capture_output=True,
        text=True,
    )
    summary = json.loads(bench.stdout)["summary"]
    figures["alone"] = {a: {k: summary[a][k] for k in ("runs", "repaired", "correct", "median_s")} for a in SKILLS}
    first, second = SKILLS  # the bench's run gives `--agent first`; the second slot comes after it
    config = BenchConfig(agent=first, parallel=2, jobs=1, extra_args=["--agent", second])
    judged = run_all(load_corpus(env_root), ["auto"], config)
    stats = aggregate(judged, ["auto"])["auto"]
    figures["fleet"] = {k: getattr(stats, k) for k in ("runs", "repaired", "correct", "median_s")}
    figures["fleet"]["by_case"] = {r.case: r.grade for r in judged}
    case = next(c for c in sorted((work / "cases").iterdir()) if _class(c) == "off_by_one")
    repo = fresh_repo(case, work / "deal")
    broken = {p: p.read_bytes() for p in repo.rglob("*.py")}
    deals = []
    for run in range(args.runs):
        found = explore("run", str(repo), *FLEET, "--parallel", "4", "--json", cwd=work)
        first_iteration = found["summary"]["iterations"][0]
        made = {c["id"]: c["generator"] for c in first_iteration["candidates"]}
        header = next((line.strip() for line in found["stderr"].splitlines() if "deal:" in line), "")
        dealt = {a: list(made.values()).count(a) for a in SKILLS}
        won = made.get(first_iteration.get("winner") or "")
        deals.append(
            {"run": run + 1, "status": found["summary"].get("status"), "dealt": dealt, "won": won, "header": header}
        )
        for path, data in broken.items():
            path.write_bytes(data)
        git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qam", "break it again")
    figures["deal_auto"] = {"case": case.name, "runs": deals}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
