"""Issue 39's benchmark: explore on real projects at their historical buggy commits (BugsInPy).

    python benchmarks/bugsinpy.py --sources DIR [--only tqdm-1 ...] [--json OUT] [--python PY38]

DIR holds a git clone of BugsInPy (soarsmu/BugsInPy) and of each project, each named
`owner+name` (a bare clone, or `owner+name/repo`): the search tool's `fetch` lays them out so.
Nothing here is fetched from the network but the pinned packages, through pip.

For every case (CASES): the project's tree at BugsInPy's buggy commit with the test files of its
fixed commit (`test_file` in bug.info: the tests that show the bug, as BugsInPy runs them), committed as the only
commit of a fresh git repository (`git archive`: no history to walk); a Python 3.8 venv of its
own (cached under CACHE/venvs/NAME) with BugsInPy's pins for that bug (`requirements.txt`, less
`pkg-resources` and the project itself) and pytest, the project installed into it without
dependencies; BugsInPy's `bug_patch.txt` (the project's own fix, source files only) written
outside the repository. Then, as a new user types it, with the case's venv active:

    explore run REPO --agent command --agent-cmd 'git apply FIX' --json      (agent "fix")
    explore run REPO --agent mutate --json                                   (agent "mutate")

no target named (and again with BugsInPy's failing tests named, `-- IDS`: agent "fix-target"),
every other setting at explore's defaults. The fix agent changes nothing once the fix is in. Judged here, not by explore's word:
**merged** = the branch's tip carries the fix (its source files equal the buggy tree with the
patch applied); the exit code, the status, the counts and the wall time are explore's.

Not in CI: it needs the projects' sources and PyPI, and minutes per case.
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

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "explore-bugsinpy"
PY38 = Path.home() / ".pyenv" / "versions" / "3.8.18" / "bin" / "python"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bugsinpy",
    "GIT_AUTHOR_EMAIL": "bugsinpy@example.invalid",
    "GIT_COMMITTER_NAME": "bugsinpy",
    "GIT_COMMITTER_EMAIL": "bugsinpy@example.invalid",
}


@dataclass(frozen=True)
class Case:
    project: str
    """BugsInPy's name for it (projects/<project>/bugs/<bug>)."""
    bug: int
    source: str
    """owner+name of the project's repository."""
    agents: tuple[str, ...] = ("fix", "fix-target")
    """fix: the project's own fix as a command agent, no target named; fix-target: the same, the
    tests BugsInPy runs (run_test.sh) named as targets; mutate: explore's mutate."""
    extra: tuple[str, ...] = ()
    """Packages beside the pins (what BugsInPy's setup.sh installs by hand)."""
    test_helpers: tuple[str, ...] = ()
    """Files the fixed commit's test file imports that the buggy commit lacks (taken from the fixed commit)."""
    pytest_files: str | None = None
    """The project's test files when pytest would not collect them by its default names (tqdm runs
    its `tests_*.py` with nose): a `[tool:pytest] python_files` line added to setup.cfg before the
    commit, as a user would tell pytest."""

    @property
    def name(self) -> str:
        return f"{self.project}-{self.bug}"


CASES = [
    Case("tqdm", 1, "tqdm+tqdm", extra=("nose", "pytest==5.4.3"), pytest_files="tests_*.py"),
    Case("httpie", 2, "httpie+httpie", extra=("pytest==5.4.3",)),
    Case("httpie", 3, "httpie+httpie", extra=("pytest==5.4.3",)),
    Case(
        "cookiecutter",
        4,
        "cookiecutter+cookiecutter",
        # BugsInPy's pins are a later release's (poyo); this 2016 commit reads YAML with ruamel.yaml
        extra=("pytest==5.4.3", "pytest-mock", "freezegun", "future", "whichcraft", "ruamel.yaml<0.16", "pyyaml"),
    ),
    Case(
        "PySnooper",
        2,
        "cool-RR+PySnooper",
        agents=("fix", "fix-target", "mutate"),
        extra=("pytest==5.4.3", "python_toolbox"),
        test_helpers=tuple(f"tests/mini_toolbox/{n}.py" for n in ("__init__", "contextlib", "pathlib")),
    ),
    Case(
        "tqdm",
        4,
        "tqdm+tqdm",
        agents=("fix", "fix-target", "mutate"),
        extra=("nose", "pytest==5.4.3"),
        pytest_files="tests_*.py",
    ),
    Case("black", 3, "psf+black", agents=("fix", "fix-target", "mutate"), extra=("pytest==5.4.3",)),
    Case("youtube-dl", 17, "ytdl-org+youtube-dl", extra=("pytest==5.4.3", "nose")),
]


def git_dir(sources: Path, name: str) -> Path:
    for candidate in (sources / name / "repo", sources / name):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    raise SystemExit(f"no clone of {name} under {sources} (fetch it, or git clone --bare it there)")


def git(where: Path, *argv: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *([f"--git-dir={where}"] if (where / "HEAD").is_file() else ["-C", str(where)]), *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(argv)} in {where}: {done.stderr.strip()}")
    return done.stdout


def bug_info(bugsinpy: Path, case: Case) -> dict[str, str]:
    text = git(bugsinpy, "show", f"HEAD:projects/{case.project}/bugs/{case.bug}/bug.info")
    info = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            info[key.strip()] = value.strip().strip('"')
    return info


def requirements(bugsinpy: Path, case: Case) -> list[str]:
    """BugsInPy's pins for the bug, less what cannot install (pkg-resources, editable checkouts)
    and the project itself (it is installed from the tree)."""
    found = subprocess.run(
        [
            "git",
            f"--git-dir={bugsinpy}",
            "cat-file",
            "-e",
            f"HEAD:projects/{case.project}/bugs/{case.bug}/requirements.txt",
        ]
    )
    if found.returncode:
        return []
    raw = subprocess.run(
        ["git", f"--git-dir={bugsinpy}", "show", f"HEAD:projects/{case.project}/bugs/{case.bug}/requirements.txt"],
        capture_output=True,
    ).stdout
    text = raw.decode("utf-16") if raw.startswith((b"\xff\xfe", b"\xfe\xff")) else raw.decode("utf-8", "replace")
    pins = []
    for line in text.splitlines():
        line = line.strip()
        name = line.split("==")[0].strip().lower().replace("_", "-")
        if not line or line.startswith(("-e", "#")) or name in {"pkg-resources", case.project.lower()}:
            continue
        pins.append(line)
    return pins


def failing_tests(bugsinpy: Path, case: Case) -> list[str]:
    """The tests BugsInPy's run_test.sh runs (those the bug fails), as pytest node ids."""
    text = git(bugsinpy, "show", f"HEAD:projects/{case.project}/bugs/{case.bug}/run_test.sh")
    ids = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        last = words[-1]
        if "::" in last:
            ids.append(last)
        elif "unittest" in words:  # test.test_utils.TestUtil.test_x -> test/test_utils.py::TestUtil::test_x
            parts = last.split(".")
            split = next(i for i, p in enumerate(parts) if p.startswith("test") and p[:1].islower() and i > 0)
            ids.append("/".join(parts[: split + 1]) + ".py::" + "::".join(parts[split + 1 :]))
    return ids


def build(case: Case, sources: Path, python: Path, work: Path) -> tuple[Path, Path, Path, list[str]]:
    """(repo, venv python, fix patch, BugsInPy's failing tests) for one case."""
    bugsinpy = git_dir(sources, "soarsmu+BugsInPy")
    project = git_dir(sources, case.source)
    info = bug_info(bugsinpy, case)
    repo = work / case.name / "repo"
    shutil.rmtree(repo.parent, ignore_errors=True)
    repo.mkdir(parents=True)
    archive = subprocess.run(
        ["git", f"--git-dir={project}", "archive", info["buggy_commit_id"]], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(repo)], input=archive, check=True)
    for test_file in filter(None, info.get("test_file", "").split(";")):  # BugsInPy's way: the fixed commit's tests
        shown = subprocess.run(
            ["git", f"--git-dir={project}", "show", f"{info['fixed_commit_id']}:{test_file.strip()}"],
            capture_output=True,
        )
        if shown.returncode == 0:
            (repo / test_file.strip()).write_bytes(shown.stdout)
        for helper in case.test_helpers:  # what that test file imports beside it, new in the fixed commit
            shown = subprocess.run(
                ["git", f"--git-dir={project}", "show", f"{info['fixed_commit_id']}:{helper}"], capture_output=True
            )
            if shown.returncode == 0:
                (repo / helper).parent.mkdir(parents=True, exist_ok=True)
                (repo / helper).write_bytes(shown.stdout)
    if case.pytest_files:
        with (repo / "setup.cfg").open("a", encoding="utf-8") as config:
            config.write(f"\n[tool:pytest]\npython_files = {case.pytest_files}\n")
    git(repo, "init", "-q", "-b", "main")
    with (repo / ".git" / "info" / "exclude").open("a", encoding="utf-8") as exclude:
        exclude.write(
            "*.egg-info/\nbuild/\n.eggs/\n"
        )  # what `pip install -e` leaves, ignored as a user's .gitignore would
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-q",
        "-m",
        f"{case.name} at {info['buggy_commit_id'][:10]} (BugsInPy's buggy commit)",
        env=GIT_ENV,
    )
    fix = work / case.name / "fix.patch"
    fix.write_text(git(bugsinpy, "show", f"HEAD:projects/{case.project}/bugs/{case.bug}/bug_patch.txt"))
    venv = CACHE / "venvs" / case.name
    interpreter = venv / "bin" / "python"
    if not (venv / "done").exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([str(python), "-m", "venv", str(venv)], check=True)
        pip = [str(interpreter), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        pins = requirements(bugsinpy, case)
        pinned = {pin.split("==")[0].strip().lower() for pin in pins}
        extra = [e for e in case.extra if e.split("==")[0].lower() not in pinned]  # the bug's own pin first
        subprocess.run([*pip, *pins, *extra], check=True)
        (venv / "done").write_text("ok\n")
    subprocess.run([str(interpreter), "-m", "pip", "install", "-q", "--no-deps", "-e", str(repo)], check=False)
    return repo, interpreter, fix, failing_tests(bugsinpy, case)


def explore_bin() -> str:
    beside = Path(sys.executable).parent / "explore"
    return str(beside) if beside.exists() else (shutil.which("explore") or "explore")


def carries_fix(repo: Path, fix: Path, branch_tip: str) -> bool:
    """The tip's tree equals the buggy tree with the fix applied (the files the patch touches)."""
    with tempfile.TemporaryDirectory() as scratch:
        check = Path(scratch) / "check"
        subprocess.run(["git", "clone", "-q", str(repo), str(check)], check=True)
        first = git(check, "rev-list", "--max-parents=0", "HEAD").split()[0]
        git(check, "checkout", "-q", first)
        if subprocess.run(["git", "-C", str(check), "apply", str(fix)], capture_output=True).returncode:
            return False
        touched = git(check, "diff", "--name-only").split()
        for path in touched:
            expected = (check / path).read_bytes()
            got = subprocess.run(["git", "-C", str(repo), "show", f"{branch_tip}:{path}"], capture_output=True).stdout
            if expected != got:
                return False
        return bool(touched)


def run_case(
    case: Case, agent: str, repo: Path, interpreter: Path, fix: Path, extra: list[str], targets: list[str]
) -> dict:
    copy = repo.parent / f"run-{agent}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(repo, copy, symlinks=True)
    subprocess.run([str(interpreter), "-m", "pip", "install", "-q", "--no-deps", "-e", str(copy)], check=False)
    argv = [explore_bin(), "run", str(copy), "--json", *extra]
    if agent.startswith("fix"):  # once applied (a later iteration), the agent changes nothing
        argv += ["--agent", "command", "--agent-cmd", f"git apply --check {fix} 2>/dev/null && git apply {fix}; true"]
    else:
        argv += ["--agent", "mutate"]
    if agent.endswith("-target"):
        argv += ["--", *targets]
    env = {**os.environ, "VIRTUAL_ENV": str(interpreter.parent.parent)}
    load = os.getloadavg()[0]
    start = time.monotonic()
    done = subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    (repo.parent / f"explore-{agent}.out").write_text(done.stdout + "\n--- stderr\n" + done.stderr)
    summary: dict = {}
    try:
        summary = json.loads(done.stdout)
    except json.JSONDecodeError:
        pass
    tip = git(copy, "rev-parse", "HEAD").strip()
    base = git(copy, "rev-list", "--max-parents=0", "HEAD").split()[0]
    merged_refs = [tip, *([summary["merged_commit"]] if summary.get("merged_commit") else [])]
    escalation = summary.get("escalation") or {}
    return {
        "case": case.name,
        "agent": agent,
        "exit": done.returncode,
        "status": summary.get("status"),
        "seconds": round(seconds, 1),
        "load": round(load, 1),
        "iterations": len(summary.get("iterations", [])),
        "baseline": summary.get("baseline"),
        "final": summary.get("final"),
        "applied": summary.get("applied"),
        "branch_moved": tip != base,
        "carries_fix": any(carries_fix(copy, fix, ref) for ref in merged_refs if ref != base),
        "escalation": escalation.get("category") if isinstance(escalation, dict) else escalation,
        "reason": (escalation.get("reason") if isinstance(escalation, dict) else None),
        "last_line": result_line(done.stderr)[:300],
    }


def result_line(stderr: str) -> str:
    """explore's last line (`STATUS: COUNTS — WHY`, before `report: …`), without the clock."""
    lines = stderr.strip().splitlines()
    found = next(
        (line for line in reversed(lines) if " — " in line and "report: " not in line), lines[-1] if lines else ""
    )
    return found.strip().split(" ", 1)[-1] if found.strip()[:1].isdigit() else found.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sources", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--agent", choices=["fix", "fix-target", "mutate"], action="append", default=[])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--python", type=Path, default=PY38)
    parser.add_argument("--work", type=Path, default=CACHE / "cases")
    parser.add_argument("--explore-arg", action="append", default=[], help="passed on to explore run")
    args = parser.parse_args()
    results = []
    for case in CASES:
        if args.only and case.name not in args.only:
            continue
        repo, interpreter, fix, targets = build(case, args.sources, args.python, args.work)
        for agent in case.agents:
            if args.agent and agent not in args.agent:
                continue
            result = run_case(case, agent, repo, interpreter, fix, args.explore_arg, targets)
            print(json.dumps(result), flush=True)
            results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
