"""explore's own pytest plugin, loaded with `-p explore_pytest_plugin`.

Standalone on purpose: the project's interpreter runs it, and explore may not be installed there
(stdlib and pytest only, any pytest from 4.6 on: it adapts to the hook arguments and config
attributes of the one it finds). It writes JSON lines to `--explore-record FILE`:

- every failing subtest (pytest 9's native subtests, pytest-subtests): its parent's id, which
  subtest, the message, so explore folds it into the parent (pytest-json-report keeps neither);
- a test that ignored the time limit (below);
- with EXPLORE_RECORD_OPENED=1 in the environment (the baseline): the files inside the invocation
  folder opened for reading (an audit hook on `open`, Python 3.8+; code and site-packages left
  out), each with the repository file whose code opened it (the nearest caller outside the
  standard library and site-packages): explore keeps those test code read, the tests' data.

With `EXPLORE_CALLS=FIFO` in the environment, each test's run as it happens, from the outermost
wrapper of its protocol and a wrapper of its call (before any report object is built), one JSON line
each, into the FIFO explore made and reads (see explore.decide.witness): `[pid, "hello"]` when
pytest registers this module (with `-p`, before any conftest or library code is imported; the
variable leaves the environment then), `[pid, "start", nodeid]` before the test's setup, `[pid,
"end", nodeid, called, raised, exception]` after its teardown, and `[pid, "finish"]` once the session
has ended. Nothing in it is secret and the process keeps no secret: the stream's shape is what
explore checks (a line library code adds inside a window breaks it). A descriptor that is no longer
the FIFO at the end (closed, or another file put in its place) ends pytest with TAMPERED_EXIT; xdist
workers get the FIFO's path from their controller. Under pytest-forked the calls run in children the
record does not see: the tests count as never called, at the baseline too.

`--explore-test-timeout SEC` bounds each test (setup, call and teardown together), and after a
hang `--explore-hang-floor`, `--explore-hang-budget` and `--explore-hangs` lower it for the tests
that follow: see _explore_test_limit (the same folder).

`--explore-deselect FILE`: the node ids listed (one a line) are left out, exactly.

`--explore-only FILE` (a shard of a sharded run): only the test files listed in FILE (one path a
line, relative to the invocation folder) are collected; every other file is ignored before it is
imported. pytest's own collection rules (testpaths, norecursedirs, collect_ignore) still apply, so
a listed file pytest would not collect in an unsharded run is not collected here either.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import FrameType

import pytest
from _explore_progress import register as register_progress
from _explore_test_limit import Limiter, Policy, parse_hangs

PYTEST_VERSION = tuple(int(part) for part in pytest.__version__.split(".")[:2] if part.isdigit())
"""The plugin adapts to the project's pytest (4.6 and later): hook arguments and config names."""

CALLS_ENV = "EXPLORE_CALLS"
TAMPERED_EXIT = 87


def pytest_plugin_registered(plugin, manager):
    """This module registered: the stream opened and its `hello` written before any conftest or
    library code is imported (see the docstring)."""
    if getattr(plugin, "__name__", None) != __name__ or CALLS_ENV not in os.environ:
        return
    recorder = _Calls.opened(os.environ.pop(CALLS_ENV))
    if recorder is not None:
        manager.register(recorder, "explore-calls-" + os.urandom(6).hex())


def pytest_addoption(parser):
    group = parser.getgroup("explore")
    group.addoption("--explore-test-timeout", type=float, default=0.0, help="Seconds per test (0: no limit).")
    group.addoption("--explore-hang-floor", type=float, default=0.0, help="After a hang, the limit's floor (0: none).")
    group.addoption("--explore-hang-budget", type=float, default=0.0, help="Seconds of hangs before the floor drops.")
    group.addoption("--explore-hangs", default="", help="HUNG,SPENT,SLOWEST: the run's hangs before this process.")
    group.addoption("--explore-record", default=None, help="JSON-lines file for failing subtests and hard timeouts.")
    group.addoption("--explore-only", default=None, help="File listing the only test files to collect (a shard).")
    group.addoption(
        "--explore-deselect", default=None, help="File listing node ids left out, exactly (--deselect takes prefixes)."
    )


def pytest_configure(config):
    register_progress(config)  # EXPLORE_PROGRESS: how far the run has gone, for explore to show
    record = config.getoption("--explore-record")
    if record:
        config.pluginmanager.register(_Subtests(record), "explore-subtests")
    if record and os.environ.get(OPENED_ENV) == "1" and hasattr(sys, "addaudithook"):
        config.pluginmanager.register(_Opened(record), "explore-opened")
    limit = config.getoption("--explore-test-timeout") or 0.0
    if limit > 0:
        policy = Policy(
            limit,
            config.getoption("--explore-hang-floor") or 0.0,
            config.getoption("--explore-hang-budget") or 0.0,
            *parse_hangs(config.getoption("--explore-hangs") or ""),
        )
        config.pluginmanager.register(Limiter(policy, record), "explore-test-timeout")
    forwarded = (getattr(config, "workerinput", None) or getattr(config, "slaveinput", None) or {}).pop(CALLS_ENV, None)
    recorder = _Calls.opened(forwarded) if forwarded else None  # an xdist worker: from the controller
    if recorder is not None:
        config.pluginmanager.register(recorder, "explore-calls-" + os.urandom(6).hex())


def pytest_collection_modifyitems(config, items):
    """--explore-deselect: the tests that ignored the limit, left out of the run that goes on
    without them — by their exact id: pytest's --deselect drops every test whose id starts with
    the one given (`test_loop` would take `test_loop_done` with it)."""
    listing = config.getoption("--explore-deselect", default=None)
    if not listing:
        return
    with open(listing, encoding="utf-8") as source:
        drop = {line.rstrip("\n") for line in source if line.strip()}
    gone = [item for item in items if item.nodeid in drop]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = [item for item in items if item.nodeid not in drop]


NEVER_IGNORED = ("conftest.py", "__init__.py")
"""Loaded for their fixtures and package setup whatever the shard: never left out."""


def _ignore(collection_path, config):
    listing = config.getoption("--explore-only", default=None)
    if not listing or collection_path.name in NEVER_IGNORED or collection_path.is_dir():
        return None
    keep = _only(config, listing)
    return True if collection_path.resolve() not in keep else None


# tryfirst: pytest < 7's own implementation answers False (not None) for a file it keeps, which
# would end the hook before this one is asked
if PYTEST_VERSION >= (7,):

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(collection_path, config):
        return _ignore(collection_path, config)
else:  # pytest < 7 names the argument `path` (a py.path), and knows no `collection_path`

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(path, config):
        return _ignore(Path(str(path)), config)


def _only(config, listing):
    keep = getattr(config, "_explore_only", None)
    if keep is None:
        with open(listing, encoding="utf-8") as source:
            names = [line.strip() for line in source if line.strip()]
        roots = {Path(str(folder)) for folder in _roots(config)}
        keep = config._explore_only = {(root / name).resolve() for root in roots for name in names}
    return keep


def _roots(config):
    """The invocation folder and the rootdir, under the names each pytest gives them."""
    params = getattr(config, "invocation_params", None)
    yield params.dir if params is not None else config.invocation_dir  # pytest < 5.1
    yield getattr(config, "rootpath", None) or config.rootdir  # pytest < 6.1: a py.path


def _append(path, entry):
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


class _Subtests:
    def __init__(self, record):
        self.record = record

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report):
        """A failing subtest: pytest 9's SubtestReport, pytest-subtests' SubTestReport."""
        if not report.failed or type(report).__name__.lower() != "subtestreport":
            return
        context = getattr(report, "context", None)
        msg, kwargs = getattr(context, "msg", None), getattr(context, "kwargs", None) or {}
        label = " ".join(
            filter(
                None,
                [
                    f"[{msg}]" if msg else "",
                    "(" + ", ".join(f"{k}={v}" for k, v in kwargs.items()) + ")" if kwargs else "",
                ],
            )
        )
        crash = getattr(report.longrepr, "reprcrash", None)
        lines = str(report.longrepr).strip().splitlines()
        message = crash.message if crash is not None else (lines[-1] if lines else "")
        _append(
            self.record,
            {
                "kind": "subtest",
                "nodeid": report.nodeid,
                "subtest": label or "subtest",
                "message": message[:500],
                "longrepr": str(report.longrepr)[-3000:],
            },
        )


OPENED_ENV = "EXPLORE_RECORD_OPENED"
CODE = (".py", ".pyc", ".pyo", ".pyd", ".pyi", ".so", ".pth")
NOT_DATA = ("site-packages", "dist-packages", "__pycache__", ".git")


class _Opened:
    """Files opened for reading from now on (an audit hook cannot be removed: it goes quiet at the end)."""

    def __init__(self, record):
        self.record, self.root, self.paths, self.on = record, os.getcwd(), set(), True
        self.library = (os.path.dirname(os.__file__), os.path.dirname(pytest.__file__), os.path.abspath(__file__))
        sys.addaudithook(self._audit)

    def _opener(self):
        frame: FrameType | None = sys._getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            if not (name.startswith("<") or name.startswith(self.library) or any(p in name for p in NOT_DATA[:2])):
                return name
            frame = frame.f_back
        return None

    def _audit(self, event, args):
        if event != "open" or not self.on:
            return
        try:
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            name = os.fsdecode(path)
            if name.endswith(CODE):  # imports, most of the events: never data (unconfigure drops them too)
                return
            reading = (
                not any(c in mode for c in "wax+") if isinstance(mode, str) else not flags & (os.O_WRONLY | os.O_RDWR)
            )
            opener = self._opener() if reading else None
            if opener:
                self.paths.add((os.path.abspath(name), opener))
        except Exception:
            pass

    def pytest_unconfigure(self, config):
        self.on = False
        root = os.path.realpath(self.root)
        found = set()
        for path, opener in self.paths:
            relative, by = _inside(root, path), _inside(root, opener)
            if relative and by and not relative.endswith(CODE) and os.path.isfile(path):
                found.add((relative, by))
        for relative, by in sorted(found):
            _append(self.record, {"kind": "opened", "path": relative, "by": by})


def _inside(root, path):
    """path relative to root (with /), or None when it is outside or in site-packages, a cache or .git."""
    relative = os.path.relpath(os.path.realpath(path), root).replace(os.sep, "/")
    if relative.startswith("../") or any(p in NOT_DATA for p in relative.split("/")):
        return None
    return relative


class _Calls:
    """The stream's writer: the FIFO's descriptor and what it was when opened, nothing secret."""

    def __init__(self, fd, path):
        self.fd, self.path, self.pid = fd, path, os.getpid()
        self.identity = _identity(fd)
        self.call = None
        self._write("hello")

    @classmethod
    def opened(cls, path):
        try:  # explore holds the reading end: the open does not wait
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.set_blocking(fd, True)  # a full FIFO makes the test wait for explore, never drops a line
        except OSError:
            return None
        return cls(fd, path)

    def _write(self, *entry):
        try:  # one write() of at most PIPE_BUF bytes: whole, never mixed with another writer's
            os.write(self.fd, (json.dumps([self.pid, *entry]) + "\n").encode())
        except OSError:  # never the test's failure: a line left out is one explore does not believe
            pass

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """A wrapper of the test's whole run, registered before any conftest or library code: nothing of
        the test runs before `start` or after `end`, which carries the call's verdict (a rerun's call
        replaces the first: rerunfailures reruns inside the run protocol)."""
        self.call = None
        self._write("start", item.nodeid)
        try:
            yield
        finally:
            called, raised, name = (True, *self.call) if self.call is not None else (False, False, "")
            self._write("end", item.nodeid, called, raised, name)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item):
        outcome = yield
        excinfo = outcome.excinfo
        failures = getattr(item, "_excinfo", None)  # a unittest TestCase's failures stay on the item
        raised = excinfo is not None or bool(failures)
        name = excinfo[0].__name__ if excinfo is not None else (type(failures[0].value).__name__ if failures else "")
        self.call = (raised, name)

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        yield
        if _identity(self.fd) != self.identity:  # closed, or another file put in its place
            session.exitstatus = TAMPERED_EXIT
        else:
            self._write("finish")

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        """xdist's controller: its workers start after the variable left the environment."""
        inputs = getattr(node, "workerinput", None)
        (inputs if inputs is not None else node.slaveinput)[CALLS_ENV] = self.path


def _identity(fd):
    try:
        found = os.fstat(fd)
    except OSError:
        return None
    return found.st_dev, found.st_ino
