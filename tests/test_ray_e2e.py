"""Issue 15's acceptance: `explore run --executor ray` end to end on a real local Ray (one
`ray start --head` for the module): the two-bug repository repaired as locally, a worker killed
mid-run, and Ctrl-C."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil
import pytest

from conftest import assert_no_debris, git, make_repo, ray_command_lines, run_cli
from explore.executors.ray import scratch_root
from explore.run.state import runs_dir
from test_run_e2e import BREAK, CALC, FIX_ADD, FIX_MUL, scripted_agent
from test_safety_signals import Ready, explore_process, gone

VOLATILE = {
    "run_id",
    "duration_s",
    "agents",
    "branch",
    "merged_commit",
    "commit",
    "report",
    "executor",
    "timing",
    "patch_path",
}


def _stable(value):
    """The summary without what differs between any two runs (ids, times, paths) or names the executor."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _differences(a, b, where: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _differences(a.get(k), b.get(k), f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


RESULT_FIELDS = {
    "status",
    "reason",
    "progress",
    "score",
    "pass_rate",
    "failed_tests",
    "newly_failing",
    "tested",
    "validated",
}
"""What a candidate's tests found: absent for a candidate one of the runs did not test."""


def _untested_alike(a: dict, b: dict) -> None:
    """A candidate whose whole-suite turn came after a validated one outranked it is not tested
    (fanout/turns): which one that is depends on when each finished generating, in either
    executor. Where one run did not test a candidate, neither side's findings for it are compared."""
    for it_a, it_b in zip(a["iterations"], b["iterations"]):
        for c_a, c_b in zip(it_a["candidates"], it_b["candidates"]):
            if not (c_a["tested"] and c_b["tested"]):
                untested = c_a if not c_a["tested"] else c_b
                assert untested["reason"].startswith("not tested"), untested
                for field in RESULT_FIELDS:
                    c_a.pop(field, None), c_b.pop(field, None)


def _workers_running_jobs(address: str) -> list[str]:
    """This cluster's workers running a job (other clusters may run in parallel test workers)."""
    return [line for line in ray_command_lines(address) if "run_on_worker" in line]


def _no_scratch_left(repo: Path) -> None:
    """None of the repository's runs left a scratch folder on a worker (same machine here)."""
    ids = [d.name for d in runs_dir(repo).iterdir()] if runs_dir(repo).exists() else []
    assert ids, "no run folder"
    assert not [i for i in ids if scratch_root(i).exists()], ids


def test_the_two_bug_repository_is_repaired_on_ray_as_it_is_locally(
    tmp_path: Path, ray_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_ADDRESS", ray_address)
    agent = scripted_agent(tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL}, "c": BREAK})
    summaries = {}
    for executor in ("local", "ray"):
        repo = make_repo(tmp_path / executor, CALC)
        code, summary, err = run_cli(
            ["run", str(repo), "--parallel", "3", "--agent-cmd", agent, "--json", "--executor", executor]
        )
        assert code == 0, err
        summaries[executor] = summary
        assert "return a * b" in (repo / "calc.py").read_text()
        assert_no_debris(repo)
    _no_scratch_left(tmp_path / "ray")
    local, ray = summaries["local"], summaries["ray"]
    assert [[c["executor"] for c in it["candidates"]] for it in ray["iterations"]] == [["ray"] * 3] * 2
    assert [[c["executor"] for c in it["candidates"]] for it in local["iterations"]] == [["local"] * 3] * 2
    ray, local = _stable(ray), _stable(local)
    _untested_alike(ray, local)
    assert _differences(ray, local) == []
    assert ray["status"] == "succeeded" and [it["winner"] for it in ray["iterations"]] == ["a", "b"]
    assert not _workers_running_jobs(ray_address)


KILLER = "import os, pathlib, signal\n\nif pathlib.Path('kill-worker').exists():\n    os.kill(os.getppid(), signal.SIGKILL)\n"


def test_a_ray_worker_killed_mid_run_makes_its_candidate_crashed_and_the_run_goes_on(
    tmp_path: Path, ray_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_ADDRESS", ray_address)
    repo = make_repo(  # the trigger is a new file outside the packages: the change policy's widening admits it
        tmp_path / "repo", {**CALC, "conftest.py": KILLER}, explore_config='allow-new-files = ["kill-worker"]\n'
    )
    # b's patch carries the trigger: any pytest session of b kills the worker running it
    agent = scripted_agent(
        tmp_path, {"a": {"replace": FIX_ADD}, "b": {"replace": FIX_MUL, "write": {"kill-worker": "now\n"}}}
    )
    code, summary, err = run_cli(
        [
            "run",
            str(repo),
            "--parallel",
            "2",
            "--agent-cmd",
            agent,
            "--json",
            "--executor",
            "ray",
            "--max-iterations",
            "1",
        ]
    )
    assert code == 1, err
    a, b = summary["iterations"][0]["candidates"]
    assert b["status"] == "crashed" and "the Ray worker died" in b["reason"], b
    assert a["status"] == "ok" and summary["iterations"][0]["winner"] == "a"
    assert summary["final"]["passed"] == 2
    assert_no_debris(repo)
    _no_scratch_left(repo)
    assert not _workers_running_jobs(ray_address)


def test_ctrl_c_while_a_ray_job_runs_exits_130_and_leaves_no_task(
    tmp_path: Path, ray_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_ADDRESS", ray_address)
    ready = Ready(tmp_path)
    files = dict(CALC)
    files["tests/test_block.py"] = ready.blocking_test()
    repo = make_repo(tmp_path / "repo", files)
    try:
        with explore_process(
            ["run", str(repo), "--agent-cmd", "true", "--executor", "ray", "--shards", "1"], tmp_path
        ) as proc:
            pids = ready.wait(1, timeout=120)  # the baseline's test is running on a Ray worker
            proc.send_signal(signal.SIGINT)
            sent = time.monotonic()
            code = proc.wait(timeout=60)
            elapsed = time.monotonic() - sent
        assert code == 130, (tmp_path / "first.err").read_text()
        assert elapsed <= 30, elapsed
        assert psutil.wait_procs([psutil.Process(pids["test"])] if not gone(pids["test"]) else [], timeout=10)[1] == []
        assert not _workers_running_jobs(ray_address)
        _no_scratch_left(repo)
        assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    finally:
        ready.close()
