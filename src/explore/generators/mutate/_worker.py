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
  every test in this process.

Wherever it needs per-test data, it neutralises the options of the user's configuration that
move tests out of this process or stop or repeat them (`-n`/`--dist`, `--forked`, `-x`/`--maxfail`,
`--lf`/`--ff`/`--sw`, `--reruns`) and reports which it overrode; plugins that reorder tests are
accommodated (the screening's own order is applied last).
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import sys
import time

import _explore_mutate_lines as lines  # _lines.py and _loading.py, copied next to this file (localise.plugin_dir)
import _explore_mutate_loading as loading
import pytest

RESULT_ENV = "EXPLORE_MUTATE_RESULT"
SHARD_ENV = (
    "EXPLORE_SHARD"  # explore.executors.shards.SHARD_ENV: this file runs in the project's interpreter, without explore
)
REQUEST_ENV = "EXPLORE_MUTATE_REQUEST"
MODE_ENV = "EXPLORE_MUTATE_MODE"
OMIT_ENV = "EXPLORE_MUTATE_OMIT"
PYCACHE_ENV = "EXPLORE_MUTATE_PYCACHE"


class Recorder:
    """Runs phase-1 ids (the failing tests) before phase-2 ids (passing tests covering the
    mutated lines) and stops as soon as the verdict is known."""

    def __init__(self, phase1, phase2, giveup, stop=True):
        self.stop = stop
        self.phase1 = list(phase1)
        self.phase2 = list(phase2)
        self.giveup = giveup
        self.outcomes = {}
        self.session = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session):
        self.session = session

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        order = {nodeid: i for i, nodeid in enumerate(self.phase1 + self.phase2)}
        items.sort(key=lambda item: order.get(item.nodeid, len(order)))

    def pytest_runtest_logreport(self, report):
        nodeid = report.nodeid
        if report.failed:
            self.outcomes[nodeid] = "failed"
        elif report.when == "call" and nodeid not in self.outcomes:
            self.outcomes[nodeid] = "passed" if report.passed or hasattr(report, "wasxfail") else "skipped"
        if report.when == "teardown" and self.stop:
            self._maybe_stop(nodeid)

    def _maybe_stop(self, nodeid):
        fixed = sum(1 for t in self.phase1 if self.outcomes.get(t) == "passed")
        failed1 = sum(1 for t in self.phase1 if self.outcomes.get(t) not in (None, "passed"))
        reason = None
        if (not fixed and failed1 >= self.giveup) or (self.phase1 and nodeid == self.phase1[-1] and not fixed):
            reason = "no failing test fixed"
        elif any(self.outcomes.get(t) == "failed" for t in self.phase2):
            reason = "broke a passing test"
        if reason and self.session is not None:
            self.session.shouldstop = reason


PYTEST_VERSION = tuple(int(part) for part in pytest.__version__.split(".")[:2] if part.isdigit())
PYTEST_ARGS = [
    "-q",
    "-p",
    "no:cacheprovider",
    "--tb=no",
    "-rN",
    "-s",
    *(["--no-header"] if PYTEST_VERSION >= (6,) else []),
]

COV = "--cov (pytest-cov)"
"""pytest-cov's own Coverage would take the tracer from mutate's (and slow every mutant down)."""

# (option dest, value that turns it off, how the user writes it)
NEUTRAL = (
    ("numprocesses", 0, "-n/--dist (pytest-xdist)"),
    ("dist", "no", "-n/--dist (pytest-xdist)"),
    ("tx", [], "-n/--dist (pytest-xdist)"),
    ("looponfail", False, "--looponfail (pytest-xdist)"),
    ("forked", False, "--forked (pytest-forked)"),
    ("maxfail", 0, "-x/--maxfail"),
    ("lf", False, "--lf"),
    ("failedfirst", False, "--ff"),
    ("newfirst", False, "--nf"),
    ("stepwise", False, "--sw"),
    ("stepwise_skip", False, "--sw-skip"),
    ("reruns", 0, "--reruns (pytest-rerunfailures)"),
    ("cov_source", None, COV),
)


def measured_by_pytest_cov(options):
    """True when pytest-cov is on for this run (`--cov` on the command line or in addopts)."""
    return bool(getattr(options, "cov_source", None))


def keep_pytest_cov_off(early_config):
    """Before pytest-cov's own `pytest_load_initial_conftests` reads `--cov`: it starts nothing."""
    if measured_by_pytest_cov(early_config.known_args_namespace):
        early_config.known_args_namespace.cov_source = None


def distributed(config):
    """True when this run sends its tests elsewhere (xdist workers, forked children)."""
    option = config.option
    dist = getattr(option, "dist", "no")
    return bool(
        getattr(option, "numprocesses", None)
        or (dist not in (None, "no") and getattr(option, "tx", None))
        or getattr(option, "forked", False)
    )


class Neutraliser:
    """Turns off, before any plugin acts on them, the options that would hide per-test data from
    this process; `overridden` says which were on (for the report)."""

    def __init__(self):
        self.overridden = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_load_initial_conftests(self, early_config, parser, args):
        keep_pytest_cov_off(early_config)
        yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config):
        self.apply(config)

    def apply(self, config):
        option = config.option
        for dest, off, text in NEUTRAL:
            value = getattr(option, dest, off)
            if value and value != off:
                setattr(option, dest, off)
                if text not in self.overridden:
                    self.overridden.append(text)


class Warm:
    """pytest configured and its session started once, in the parent: every fork only collects
    its ids and runs them (about 20 ms against 200–600 ms for a whole `pytest.main`)."""

    def __init__(self):
        self.recorder = Recorder([], [], 10**6)
        self.neutraliser = Neutraliser()
        self.config = None
        self.session = None
        self.imported = set()
        self.live = None
        """The project's functions in this process (_hotswap.Live), when the helper is there."""
        self.items = {}
        """Node id → test item collected in this (the parent) process, for the children to run."""
        self.collected = set()
        self.loaded = set()
        """Real paths of the project's files imported here by that collection."""
        self.late_conftest = False
        """That collection loaded a conftest: pytest keeps it, with whatever it imported, so a
        child that cannot swap the mutant in runs a whole fresh pytest instead."""

    def start(self):
        from _pytest.config import _prepareconfig
        from _pytest.main import Session

        try:
            import _explore_mutate_hotswap as hotswap
        except ImportError:
            hotswap = None
        self.live = hotswap.Live(os.getcwd()) if hotswap is not None else None
        sys.setprofile(self.live.profile if self.live is not None else None)  # conftests may run project code
        try:
            config = _prepareconfig(list(PYTEST_ARGS), plugins=[self.recorder, self.neutraliser])
            session = (
                Session.from_config(config) if hasattr(Session, "from_config") else Session(config)
            )  # pytest < 5.4
            config._do_configure()
            config.hook.pytest_sessionstart(session=session)
        finally:
            sys.setprofile(None)
        self.config, self.session = config, session
        self.refresh_imported()

    def refresh_imported(self):
        self.imported = {
            os.path.realpath(f) for f in (getattr(m, "__file__", None) for m in list(sys.modules.values())) if f
        }

    def usable_for(self, files):
        """Not when the warm-up imported a file the mutant changes (a conftest importing it)."""
        return self.session is not None and not any(os.path.realpath(f) in self.imported for f in files)

    def collect_here(self, ids, files):
        """In the parent, before forking: collect (once) the test files of `ids`, noting which of
        the project's functions run meanwhile, so that a child can run those items with the
        mutant swapped in, without importing the project or collecting again."""
        if self.live is None:
            return
        for path in files:
            self.live.original(path)  # compiled once here, not in every child
        wanted = {i.split("::", 1)[0] for i in ids if i not in self.items} - self.collected
        if not wanted:
            return
        self.collected |= wanted
        self.recorder.__init__([], [], 10**6)
        self.config.args = sorted(wanted)
        sys.setprofile(self.live.profile)
        try:
            self.config.hook.pytest_collection(session=self.session)
        except BaseException:  # collection errors: those ids are not here, children collect them
            pass
        finally:
            sys.setprofile(None)
        self.items.update((item.nodeid, item) for item in self.session.items)
        self.loaded = {
            self.live.real(m.__file__) for m in list(sys.modules.values()) if getattr(m, "__file__", None)
        } - {None}
        self.late_conftest = self.late_conftest or any(
            os.path.basename(path) == "conftest.py" for path in self.loaded if path not in self.imported
        )
        self.live.index()

    def run_collected(self, request):
        """In a child: the items the parent collected, with the mutant swapped into the modules
        the parent imported; None when that is not the same as importing it afresh."""
        ids = list(request["phase1"]) + list(request["phase2"])
        if self.live is None or not ids or any(i not in self.items for i in ids):
            return None
        if not self.live.swap(request["files"], self.loaded):
            return None
        self.recorder.__init__(
            request["phase1"], request["phase2"], request.get("giveup", 10**6), request.get("stop", True)
        )
        self.recorder.session = self.session
        session = self.session
        session.items = [self.items[i] for i in ids]
        session.testsfailed, session.shouldstop, session.shouldfail = 0, False, False
        started = time.monotonic()
        try:
            self.config.hook.pytest_runtestloop(session=session)
        except BaseException:  # Interrupted (stop rule), a mutant's SystemExit
            pass
        return {
            "status": "ok",
            "exit": 1,
            "outcomes": self.recorder.outcomes,
            "duration": time.monotonic() - started,
            "swapped": True,
        }

    def forget_collected(self):
        """Drop the project's and tests' modules this process imported after its start-up (by a
        collection here), and the items: a child imports and collects afresh, or the parent
        collects again after the files changed."""
        if self.live is not None:
            for name, module in list(sys.modules.items()):
                path = getattr(module, "__file__", None)
                if path and self.live.real(path) and os.path.realpath(path) not in self.imported:
                    del sys.modules[name]
        self.items, self.collected, self.loaded, self.late_conftest = {}, set(), set(), False

    def run(self, request):
        self.recorder.__init__(
            request["phase1"], request["phase2"], request.get("giveup", 10**6), request.get("stop", True)
        )
        self.recorder.session = self.session
        self.config.args = list(request["phase1"]) + list(request["phase2"])
        started = time.monotonic()
        try:
            self.config.hook.pytest_collection(session=self.session)
            self.config.hook.pytest_runtestloop(session=self.session)
        except BaseException:  # Interrupted (stop rule, collection errors), a mutant's SystemExit
            pass
        return {"status": "ok", "exit": 1, "outcomes": self.recorder.outcomes, "duration": time.monotonic() - started}


def screen(request, prepared=None):
    """Run the request's tests against its mutant in this process (a fork, or a fresh pytest)."""
    files = request["files"]
    if prepared is not None:
        sys.meta_path.insert(0, loading.MutantFinder(files))
        answer = prepared.run_collected(request)  # in place: fine even where a conftest imported the file
        if answer is not None:
            return answer
        fresh = prepared.late_conftest or not prepared.usable_for(files)
        prepared.forget_collected()
        if not fresh:
            return prepared.run(request)
    root = os.path.realpath(os.getcwd()) + os.sep
    for name, module in list(sys.modules.items()):  # the slow path: forget every project module
        path = getattr(module, "__file__", None)
        if path and os.path.realpath(path).startswith(root):
            del sys.modules[name]
    sys.meta_path.insert(0, loading.MutantFinder(files))
    recorder = Recorder(request["phase1"], request["phase2"], request.get("giveup", 10**6), request.get("stop", True))
    started = time.monotonic()
    code = pytest.main([*PYTEST_ARGS, *request["phase1"], *request["phase2"]], plugins=[recorder, Neutraliser()])
    return {"status": "ok", "exit": int(code), "outcomes": recorder.outcomes, "duration": time.monotonic() - started}


def _limit_memory(extra_mb):
    try:
        import resource

        with open("/proc/self/statm") as handle:
            vms = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = vms + extra_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError):
        pass


def fork_screen(request, devnull, prepared=None):
    """Fork a child for one mutant; kill its process group when it overruns request['timeout']."""
    if prepared is not None and prepared.session is not None:
        prepared.collect_here(list(request["phase1"]) + list(request["phase2"]), request["files"])
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.close(read_fd)
            os.dup2(devnull, 0)
            _limit_memory(request.get("memory_mb", 1024))
            result = screen(request, prepared)
        except BaseException as exc:  # a mutant may raise anything, even SystemExit
            result = {"status": "crash", "error": f"{type(exc).__name__}: {exc}"[:500]}
        data = json.dumps(result).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
        os._exit(0)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    os.close(write_fd)
    deadline = time.monotonic() + float(request.get("timeout", 5.0))
    chunks = []
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    if timed_out:
        for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
            try:
                kill()
            except OSError:
                pass
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"status": "timeout"}
    try:
        return json.loads(b"".join(chunks).decode() or "null") or {
            "status": "crash",
            "error": f"child exit status {status}",
        }
    except ValueError:
        return {"status": "crash", "error": f"unreadable child report (status {status})"}


def serve(root, preload):
    """The pre-imported worker: one JSON request per line in, one JSON answer per line out."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.chdir(root)
    started = time.monotonic()
    for name in preload:
        try:
            importlib.import_module(name)
        except BaseException:
            pass
    prepared = Warm()
    note = "prepared"
    try:
        prepared.start()
    except BaseException as exc:  # an unusual pytest: every fork runs a whole pytest.main instead
        prepared = None
        note = f"plain pytest.main per mutant ({type(exc).__name__}: {exc})"[:300]
    loading.cache_bytecode(os.environ.get(PYCACHE_ENV))
    hello = {
        "ready": True,
        "pid": os.getpid(),
        "warm_s": time.monotonic() - started,
        "mode": note,
        "overridden": prepared.neutraliser.overridden if prepared is not None else [],
    }
    proto.write(json.dumps(hello) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "changed" in request:  # a new iteration: still good unless this process imported a changed file
            loading.forget_bytecode(request["changed"])
            stale = prepared is not None and (
                any(os.path.realpath(f) in prepared.imported for f in request["changed"])
                or bool(request["changed"] and prepared.late_conftest)
            )
            if prepared is not None and request["changed"] and not stale:
                prepared.forget_collected()
                if prepared.live is not None:
                    prepared.live.forget()
            proto.write(json.dumps({"stale": stale}) + "\n")
            if stale:
                return
            continue
        answer = fork_screen(request, devnull, prepared)
        answer["id"] = request.get("id")
        proto.write(json.dumps(answer) + "\n")


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


if _mode in ("coverage", "baseline") and _request is None:
    _coverage = lines.start_coverage(json.loads(os.environ.get(OMIT_ENV, "[]")))


def _switch(context):
    if _tracer is not None:
        _tracer.context = context
    elif _coverage is not None:
        _coverage.switch_context(context)


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Before pytest-cov starts its Coverage: mutate's own runs keep it off; a baseline keeps the
    user's --cov and measures nothing itself (two tracers cannot share a thread)."""
    global _coverage, _skipped
    if _request is not None or _mode == "coverage":
        keep_pytest_cov_off(early_config)
    elif _mode == "baseline" and measured_by_pytest_cov(early_config.known_args_namespace):
        if _coverage is not None:
            _coverage.stop()
            _coverage = None
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
        if _coverage is not None:
            _coverage.stop()
            _coverage = None
        _skipped = _skipped or "the baseline ran its tests in other processes (xdist or --forked)"
    elif _mode == "coverage":
        _neutraliser.apply(config)
        if _coverage is None:
            _tracer = lines.LineTracer(os.getcwd(), json.loads(os.environ.get(OMIT_ENV, "[]")))
            sys.settrace(_tracer.trace)


def pytest_runtest_logstart(nodeid, location):
    _switch(nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _switch("")


def pytest_unconfigure(config):
    if _tracer is not None:
        sys.settrace(None)
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
        elif _coverage is not None:
            data["trace"] = lines.coverage_report(_coverage, os.getcwd())
    else:
        return
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        serve(sys.argv[2], json.loads(os.environ.get("EXPLORE_MUTATE_PRELOAD", "[]")))
    else:
        sys.stderr.write("usage: _worker.py serve ROOT\n")
        sys.exit(2)
