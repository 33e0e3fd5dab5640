"""Standalone helper run by the *project's* interpreter (stdlib + pytest only, no explore import).

Three uses:
- `python _worker.py serve ROOT`: imports pytest (and the project's third-party imports) once,
  then for each JSON request on stdin forks a child that loads the mutant's source from memory,
  runs pytest on the selected ids and reports outcomes; the parent kills a child that overruns
  its timeout and answers one JSON line per request.
- `-p <this module>` with EXPLORE_MUTATE_REQUEST set: the same screening in a fresh
  `python -m pytest` (the baseline design the benchmark compares against).
- `-p <this module>` with EXPLORE_MUTATE_MODE=coverage: per-test lines (contexts named by node
  ids) measured through coverage's Python API, read back with `CoverageData.contexts_by_lineno`
  in this process (no `coverage json`), or a line tracer when coverage is not installed;
  EXPLORE_MUTATE_MODE=baseline: the same, riding along the run's baseline, when that run keeps
  every test in this process — on a Python without sys.monitoring, unless it collects a big suite
  (EXPLORE_MUTATE_TRACE_MOST tests or more): then it stops tracing before the first test.

Wherever it needs per-test data, it neutralises the options of the user's configuration that
move tests out of this process or stop or repeat them (`-n`/`--dist`, `--forked`, `-x`/`--maxfail`,
`--lf`/`--ff`/`--sw`, `--reruns`) and reports which it overrode; plugins that reorder tests are
accommodated (the screening's own order is applied last).

This file is the `-p` plugin and the entry point; the serve loop is in `_serve.py` (with the
prepared pytest of `_warm.py`), the plugin objects both uses share in `_plugins.py`.
"""

from __future__ import annotations

import json
import os
import sys

# _lines.py, _loading.py, _plugins.py (and for `serve`: _serve.py, _warm.py), copied next to this file (localise.plugin_dir)
import _explore_mutate_lines as lines
import _explore_mutate_loading as loading
import pytest
from _explore_mutate_plugins import Neutraliser, Recorder, distributed, keep_pytest_cov_off, measured_by_pytest_cov

RESULT_ENV = "EXPLORE_MUTATE_RESULT"
SHARD_ENV = (
    "EXPLORE_SHARD"  # explore.executors.shards.SHARD_ENV: this file runs in the project's interpreter, without explore
)
REQUEST_ENV = "EXPLORE_MUTATE_REQUEST"
MODE_ENV = "EXPLORE_MUTATE_MODE"
OMIT_ENV = "EXPLORE_MUTATE_OMIT"
PYCACHE_ENV = "EXPLORE_MUTATE_PYCACHE"


# --- as a pytest plugin (`-p`): fresh-process screening, or per-test coverage ----------------

_recorder = None
_tracer = None
_coverage = None
_request = None
_neutraliser = Neutraliser()
_skipped = None
"""Why a baseline run measured nothing (its tests ran in other processes)."""
_mode = os.environ.get(MODE_ENV) if __name__ != "__main__" else None
_result_path = os.environ.get(RESULT_ENV) if __name__ != "__main__" else None
_shard = os.environ.get(SHARD_ENV, "") if _mode == "baseline" else ""
"""`k/n` when this baseline is one shard of n: it writes its own part of the result."""
if _result_path and _shard:
    _stem, _dot, _suffix = _result_path.rpartition(".")
    _result_path = f"{_stem}.shard-{_shard.split('/')[0]}.{_suffix}"
if _mode:  # a pytest the tests start in turn inherits the -p but measures and writes nothing
    os.environ.pop(MODE_ENV, None)
    os.environ.pop(RESULT_ENV, None)
if os.environ.get(REQUEST_ENV) and __name__ != "__main__":
    # At import, before conftest files load: a conftest that imports the module gets the mutant.
    with open(os.environ[REQUEST_ENV], encoding="utf-8") as _handle:
        _request = json.load(_handle)
    sys.meta_path.insert(0, loading.MutantFinder(_request["files"]))


BIG_ENV = "EXPLORE_MUTATE_TRACE_MOST"
BIG_REASON = "a big suite without sys.monitoring: coverage.py's tracer would slow every test of the baseline"
"""Why a baseline records nothing past its collection (localise.BIG_REASON, read by explore): a suite
of at least EXPLORE_MUTATE_TRACE_MOST tests on a Python before 3.12, where the tracer costs every
instruction of every test (1.6-2.6x networkx's suite); mutate measures the failing tests' files after it."""

if _mode in ("coverage", "baseline") and _request is None:
    _omit = json.loads(os.environ.get(OMIT_ENV, "[]"))
    _tracer = lines.start_monitor(os.getcwd(), _omit)  # Python 3.12+
    _coverage = None if _tracer is not None else lines.start_coverage(_omit)
_pauser = lines.Pauser(_coverage) if _coverage is not None else None
"""coverage.py's tracer, on only during each test's setup, call and teardown once collection is over."""


def _stop_measuring():
    global _coverage, _tracer, _pauser
    if _pauser is not None:
        _pauser.resume()
        _pauser = None
    if _coverage is not None:
        _coverage.stop()
        _coverage = None
    if _tracer is not None:
        _tracer.stop()
        _tracer = None


def _switch(context):
    if _tracer is not None:
        _tracer.context = context
    elif _coverage is not None:
        _coverage.switch_context(context)


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Before pytest-cov starts its Coverage: mutate's own runs keep it off; a baseline keeps the
    user's --cov and measures nothing itself (two tracers cannot share a thread)."""
    global _skipped
    if _request is not None or _mode == "coverage":
        keep_pytest_cov_off(early_config)
    elif _mode == "baseline" and measured_by_pytest_cov(early_config.known_args_namespace):
        _stop_measuring()
        _skipped = "pytest-cov measured the baseline (--cov)"
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    global _recorder, _tracer, _coverage, _skipped
    if _request is not None:
        _neutraliser.apply(config)
        _recorder = Recorder(
            _request["phase1"], _request["phase2"], _request.get("giveup", 10**6), _request.get("stop", True)
        )
        config.pluginmanager.register(_recorder, "explore-mutate-recorder")
    elif _mode == "baseline" and (hasattr(config, "workerinput") or distributed(config)):
        # the user's run sends tests to other processes: this run measures nothing, mutate will
        _stop_measuring()
        _skipped = _skipped or "the baseline ran its tests in other processes (xdist or --forked)"
    elif _mode == "coverage":
        _neutraliser.apply(config)
        if _coverage is None and _tracer is None:
            _tracer = lines.LineTracer(os.getcwd(), json.loads(os.environ.get(OMIT_ENV, "[]")))
            _tracer.start()


def pytest_collection_finish(session):
    """A big suite's baseline under coverage.py's tracer stops tracing before its first test (only its
    imports and collection were traced; the run that measures the failing tests' files traces them again)."""
    global _skipped
    most = int(os.environ.get(BIG_ENV) or 0)
    if _mode == "baseline" and _coverage is not None and most and len(session.items) >= most:
        _stop_measuring()
        _skipped = _skipped or BIG_REASON
    elif _pauser is not None:
        _pauser.pause()


def _traced_phase():
    """A hookwrapper's body: coverage.py's tracer on for one phase of a test (Pauser)."""
    if _pauser is not None:
        _pauser.resume()
    try:
        yield
    finally:
        if _pauser is not None:
            _pauser.pause()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    yield from _traced_phase()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item):
    yield from _traced_phase()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    yield from _traced_phase()


def pytest_runtest_logstart(nodeid, location):
    _switch(nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _switch("")


def pytest_unconfigure(config):
    if _pauser is not None:
        _pauser.resume()
    if _tracer is not None:
        _tracer.stop()
    if _coverage is not None:
        _coverage.stop()
    path = _result_path
    if not path or hasattr(config, "workerinput"):
        return
    if _request is not None and _recorder is not None:
        data = {"status": "ok", "outcomes": _recorder.outcomes}
    elif _mode in ("coverage", "baseline"):
        data = (
            {"status": "skipped", "reason": _skipped}
            if _skipped
            else {"status": "ok", "overridden": _neutraliser.overridden}
        )
        if _shard:
            data["shard"] = _shard
        if _tracer is not None:
            data["trace"] = _tracer.report()
            data["tracer"] = "sys.monitoring" if isinstance(_tracer, lines.LineMonitor) else "settrace"
        elif _coverage is not None:
            data["trace"] = lines.coverage_report(_coverage, os.getcwd())
            data["tracer"] = "coverage"
    else:
        return
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        import _explore_mutate_serve as serving

        serving.serve(
            sys.argv[2], json.loads(os.environ.get("EXPLORE_MUTATE_PRELOAD", "[]")), os.environ.get(PYCACHE_ENV)
        )
    else:
        sys.stderr.write("usage: _worker.py serve ROOT\n")
        sys.exit(2)
