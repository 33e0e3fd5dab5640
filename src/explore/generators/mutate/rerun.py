"""The baseline's flaky rerun, screened in a warm screening worker: a fresh fork of it runs the
failing tests alone on the unchanged tree (pytest configured, the test files collected, no test
run before), without paying for another interpreter, pytest's import and the project's
collection. It runs under pytest's output capture as the project configures it (as screening
does, `_plugins.PYTEST_ARGS`), but it is not a pytest process of its own: `--reruns` is off, it
shares the worker's home and is not sandboxed — so the run trusts only its failures (a test that
fails again stays failing) and reruns every other test in a pytest process of its own
(run/suite.py `Suite.flaky`). A test that overruns the per-test limit is stopped there and the tests after it
run in a new fork."""

from __future__ import annotations

import time

from ..base import RerunRequest
from .screen import ForkWorker, Job

NO_CAP_MB = 2**20
"""The fork's address-space allowance when the run caps no memory (a mebibyte count: 1 TiB)."""


async def in_worker(worker: ForkWorker, request: RerunRequest) -> dict[str, str] | None:
    """Each failing test's outcome (`timeout` for one stopped at the limit), or None when the
    worker is gone or lost on the way (the run reruns them in a process of its own)."""
    process = worker.process
    if process is None:
        return None
    limit = request.test_timeout or 30.0
    memory_mb = request.memory_limit // 2**20 if request.memory_limit else NO_CAP_MB
    started = time.monotonic()
    outcomes: dict[str, str] = {}
    rest, forks = list(request.failing), 0
    while rest:
        forks += 1
        verdict = await worker.screen(Job({}, rest, [], limit, 10**6, memory_mb, stop=False, per_test=True))
        if verdict.status not in ("ok", "timeout"):
            _write_log(request, process.pid, outcomes, forks, time.monotonic() - started, verdict.error)
            return None
        outcomes.update({i: o for i, o in verdict.outcomes.items() if i in rest})
        if verdict.status == "ok" or verdict.stuck not in rest:
            break
        assert verdict.stuck is not None
        outcomes[verdict.stuck] = "timeout"
        rest = rest[rest.index(verdict.stuck) + 1 :]
    _write_log(request, process.pid, outcomes, forks, time.monotonic() - started, None)
    return outcomes


def _write_log(
    request: RerunRequest, pid: int, outcomes: dict[str, str], forks: int, seconds: float, lost: str | None
) -> None:
    lines = [
        f"flaky rerun of {len(request.failing)} failing test(s) at {request.commit[:10]}, alone, in a fresh fork of"
        f" mutate's warm screening worker (pid {pid}: pytest configured and the test files collected there, as a"
        f" new pytest process would, before any test ran); each test stopped after {request.test_timeout or 30.0:g}s",
        "",
        *(f"{outcomes.get(i, 'not run'):<9} {i}" for i in request.failing),
        "",
        f"in {seconds:.2f}s and {forks} fork(s); a test that overran its limit ('timeout') was stopped and the"
        " tests after it ran in a new fork. Outcomes only: each failure's traceback is in the baseline's log.",
        "The fork is not a pytest process of its own (pytest's capture as the project configures it, but --reruns"
        " off, the worker's home, no sandbox): the tests"
        " that failed here again (failed, error, timeout) stay failing; every other one is rerun in a pytest process"
        f" of its own (its log: {_process_log(request)}), and only a pass there makes it flaky.",
    ]
    if lost:
        lines.append(
            f"the worker was lost ({lost}): the run reruns all these tests in a pytest process of its own"
            f" ({_process_log(request)})"
        )
    request.log_path.parent.mkdir(parents=True, exist_ok=True)
    request.log_path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _process_log(request: RerunRequest) -> str:
    """The pytest process's log beside this one (`…-fork.log` → `….log`)."""
    name = request.log_path.name
    return name.removesuffix("-fork.log") + ".log" if name.endswith("-fork.log") else "the rerun's log"
