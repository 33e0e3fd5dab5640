"""Run explore on each case × strategy in a scratch copy, `jobs` at a time, and judge each result."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..model.runstate import REPAIRED
from ..model.summary import Summary
from .corpus import Case
from .judge import git, judge
from .results import CaseResult, Verdict

BRANCH = "main"


@dataclass
class BenchConfig:
    agent: str = "mutate"
    agents: bool = False
    """The arms are agents (`--agent A --agent B`), each run with `strategy`; else strategies."""
    strategy: str = "auto"
    parallel: int = 3
    jobs: int = 1
    case_timeout: float = 1800.0
    python: str = field(default_factory=lambda: sys.executable)
    extra_args: list[str] = field(default_factory=list)


def default_jobs(parallel: int, cores: int | None = None) -> int:
    """Cases at once without oversubscribing: each explore run keeps `parallel` candidates busy."""
    return max(1, (cores or os.cpu_count() or 1) // max(1, parallel))


def prepare(case: Case, scratch: Path) -> tuple[Path, str]:
    """A fresh git repo in scratch/repo holding the case's project; (repo, initial commit)."""
    repo = scratch / "repo"
    shutil.copytree(
        case.project, repo, symlinks=True, ignore=shutil.ignore_patterns(".explore", "__pycache__", ".pytest_cache")
    )
    if not (repo / ".git").exists():
        git(repo, "init", "-q", "-b", BRANCH)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"bench case {case.name}")
    else:
        git(repo, "checkout", "-q", "-B", BRANCH)
    return repo, git(repo, "rev-parse", "HEAD")


def explore_command(repo: Path, arm: str, config: BenchConfig) -> list[str]:
    agent, strategy = (arm, config.strategy) if config.agents else (config.agent, arm)
    return [
        config.python,
        "-m",
        "explore",
        "run",
        str(repo),
        "--agent",
        agent,
        "--strategy",
        strategy,
        "--parallel",
        str(config.parallel),
        "--json",
        "--apply-partial",  # the judge and a history case's second run read the result in the case's tree, met gate or not
        *config.extra_args,
    ]


def run_case(case: Case, strategy: str, config: BenchConfig) -> CaseResult:
    """One case under one strategy, from scratch copy to verdict; the scratch folder is removed."""
    scratch = Path(tempfile.mkdtemp(prefix=f"explore-bench-{case.name}-"))
    result = CaseResult(
        case=case.name,
        defect_class=case.defect_class,
        family=case.family,
        strategy=config.strategy if config.agents else strategy,
        agent=strategy if config.agents else "",
        status="error",
        exit_code=None,
        runs=case.runs,
    )
    try:
        repo, initial = prepare(case, scratch)
        worktrees = scratch / "worktrees"
        env = {
            **os.environ,
            "EXPLORE_WORKTREES_DIR": str(worktrees),
            "PYTHONDONTWRITEBYTECODE": "1",
            # the case's tests run on the interpreter the judge uses: first `python` on PATH
            "PATH": os.pathsep.join([str(Path(config.python).parent), os.environ.get("PATH", "")]),
        }
        started = time.monotonic()
        for run in range(case.runs):  # a history case: the next run starts from the records the last one left
            if run and (result.error or result.status == "succeeded"):
                break
            proc = subprocess.Popen(
                explore_command(repo, strategy, config),
                cwd=scratch,
                env=env,
                start_new_session=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                stdout, stderr = proc.communicate(timeout=config.case_timeout)
                result.exit_code = proc.returncode
                _read_summary(result, stdout, stderr)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                result.error = f"explore did not finish within {config.case_timeout:.0f}s"
        result.duration_s = round(time.monotonic() - started, 2)
        result.repaired = result.exit_code == 0 and result.status in REPAIRED
        result.verdict = judge(repo, initial, case, config.python, BRANCH, scratch, worktrees)
    except (OSError, subprocess.CalledProcessError) as exc:
        result.error = result.error or f"bench infrastructure: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill explore and everything it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


def _read_summary(result: CaseResult, stdout: str, stderr: str) -> None:
    """Fill result from explore's JSON summary (or record why it could not be read); a later run of
    the same case adds its iterations, candidates and usage to the earlier ones'."""
    line = next((out for out in reversed(stdout.strip().splitlines()) if out.startswith("{")), "")
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        result.error = f"no JSON summary (exit {result.exit_code}): {stderr.strip()[-300:]}"
        return
    if data.get("status") == "error":
        result.error = str(data.get("error"))
        return
    try:
        summary = Summary.model_validate(data)
    except ValidationError as exc:
        result.error = f"unreadable summary: {exc.errors()[0]['msg']}"
        return
    result.status = summary.status
    result.stop_reason = summary.stop_reason
    result.iterations += len(summary.iterations)
    result.candidates += sum(len(i.candidates) for i in summary.iterations)
    result.iteration_strategies += [i.strategy for i in summary.iterations]
    result.run_iterations.append(len(summary.iterations))
    result.strategies_used = sorted(set(result.iteration_strategies))
    result.usage += summary.usage


def run_all(
    cases: list[Case],
    strategies: list[str],
    config: BenchConfig,
    on_done: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Every case × strategy, `config.jobs` at a time; results in corpus order."""
    work = [(c, s) for c in cases for s in strategies]
    results: dict[tuple[str, str], CaseResult] = {}
    with ThreadPoolExecutor(max_workers=max(1, config.jobs)) as pool:
        futures = {pool.submit(run_case, c, s, config): (c.name, s) for c, s in work}
        for future in as_completed(futures):
            key = futures[future]
            try:
                res = future.result()
            except Exception as exc:  # a bug in one case must not lose the others
                case = next(c for c, _ in work if c.name == key[0])
                res = CaseResult(
                    case=key[0],
                    defect_class=case.defect_class,
                    strategy=config.strategy if config.agents else key[1],
                    agent=key[1] if config.agents else "",
                    status="error",
                    exit_code=None,
                    verdict=Verdict(),
                    error=f"{type(exc).__name__}: {exc}",
                )
            results[key] = res
            if on_done:
                on_done(res)
    return [results[(c.name, s)] for c, s in work]
