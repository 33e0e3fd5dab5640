"""Per-test executed lines, for mutate's worker (`_worker.py`), in the *project's* interpreter
(stdlib only; coverage when the project has it). Copied next to the worker as
`_explore_mutate_lines`: on Python 3.12+ a sys.monitoring collector (PEP 669), else coverage.py's
contexts by node id, else a settrace fallback, all three with the same output shape."""

from __future__ import annotations

import fnmatch
import os
import sys


def start_coverage(omit):
    """Coverage through its API from this import on (before conftest files import the project),
    measuring the project's files only; None when coverage is not installed or already running."""
    try:
        import coverage
    except ImportError:
        return None
    if coverage.Coverage.current() is not None:
        return None
    cov = coverage.Coverage(data_file=None, source=[os.getcwd()], omit=omit, branch=False, config_file=False)
    cov.start()
    return cov


class Pauser:
    """coverage.py's tracer on only while a test runs its setup, call and teardown (issue 40.3).

    Before Python 3.12 a trace function puts the whole interpreter in its slow tracing mode,
    whatever files it measures: pytest's own work between the phases — making each report,
    formatting a failure's traceback (pytest parses the test file's source for it), logging —
    ran at that cost although none of it is a test's line of the project. Paused between the
    phases, resumed for each (`Collector.pause`/`resume`, which `Coverage.stop`/`start` use).
    Only while coverage has one tracer: a thread a test started has a tracer of its own, and
    `resume` would start every tracer on this thread; from then on the tracer stays on, as it
    always was."""

    def __init__(self, cov):
        collector = getattr(cov, "_collector", None)
        usable = all(hasattr(collector, name) for name in ("pause", "resume", "tracers"))
        self.collector = collector if usable else None
        self.paused = False

    def pause(self):
        if self.collector is not None and not self.paused and len(self.collector.tracers) == 1:
            self.collector.pause()
            self.paused = True

    def resume(self):
        collector = self.collector
        if self.paused and collector is not None:
            collector.resume()
            self.paused = False
            if len(collector.tracers) != 1:
                self.collector = None


def coverage_report(cov, root):
    """`{"files": {relative path: {"contexts": {line: [node ids]}}}}` from coverage's data, read
    in this process."""
    data = cov.get_data()
    root = os.path.realpath(root) + os.sep
    files = {}
    for path in data.measured_files():
        real = os.path.realpath(path)
        if not real.startswith(root):
            continue
        by_line = data.contexts_by_lineno(path)
        files[real[len(root) :]] = {"contexts": {str(n): sorted(c) for n, c in by_line.items()}}
    return {"files": files}


class LineTracer:
    """Per-test executed lines without coverage.py: a settrace fallback, same output shape."""

    def __init__(self, root, omit):
        self.root = os.path.realpath(root) + os.sep
        self.omit = omit
        self.context = ""
        self.lines = {}
        self.keep = {}

    def wanted(self, filename):
        if filename not in self.keep:
            real = os.path.realpath(filename)  # `<frozen abc>`, `<string>`: no file, as coverage.py measures none
            rel = real[len(self.root) :] if real.startswith(self.root) and os.path.isfile(real) else None
            ok = rel is not None and not any(
                fnmatch.fnmatch(rel, p) or fnmatch.fnmatch("/" + rel, p) for p in self.omit
            )
            self.keep[filename] = rel if ok else None
        return self.keep[filename]

    def start(self):
        sys.settrace(self.trace)

    def stop(self):
        sys.settrace(None)

    def trace(self, frame, event, arg):
        rel = self.wanted(frame.f_code.co_filename)
        if rel is None:
            return None
        contexts = self.lines.setdefault(rel, {})
        contexts.setdefault(frame.f_lineno, set()).add(self.context)

        def local(frame, event, arg):
            if event == "line":
                contexts.setdefault(frame.f_lineno, set()).add(self.context)
            return local

        return local

    def report(self):
        files = list(self.lines.items())  # a thread the tests left running may still add lines
        return {"files": {f: {"contexts": {str(n): sorted(c) for n, c in list(ls.items())}} for f, ls in files}}


MONITOR_TOOLS = (5, 4, 3)
"""sys.monitoring tool ids tried in turn: the optimizer's first (nothing under a test suite claims
it), then the two no one reserves; coverage.py (1), a debugger (0) or a profiler (2) under the tests
keeps its own. The id is held for the whole run: a test that claims the same one fails there,
and only there — the baseline's flaky rerun runs without this plugin."""


def start_monitor(root, omit):
    """Per-test lines through sys.monitoring from now on: a LineMonitor, started; None before
    Python 3.12 or when no tool id is free."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return None
    for tool in MONITOR_TOOLS:
        if monitoring.get_tool(tool) is None:
            monitor = LineMonitor(root, omit, monitoring, tool)
            monitor.start()
            return monitor
    return None


class LineMonitor(LineTracer):
    """LineTracer's lines through sys.monitoring: each code object of a measured file reports each
    of its lines once per test (LINE, then DISABLE until the next test's `restart_events`), and a
    code object of any other file is dropped at its first start. Far cheaper than a trace
    function, whose calls cost every frame of pytest and the libraries; coverage.py's own
    sys.monitoring core has no dynamic contexts."""

    def __init__(self, root, omit, monitoring, tool):
        super().__init__(root, omit)
        self.monitoring = monitoring
        """sys.monitoring (named so here: the module has no such attribute before 3.12)."""
        self.tool = tool
        self._context = ""
        self._watched = {}
        """The code objects measured, by identity: a module imported again in a test (a lazy-import test)
        is a new code object equal to the old one, and it reports its lines too."""

    @property
    def context(self):
        return self._context

    @context.setter
    def context(self, value):
        self._context = value
        if getattr(self, "tool", None) is not None:
            self.monitoring.restart_events()  # every line reports again, for this test

    def start(self):
        monitoring = self.monitoring
        monitoring.use_tool_id(self.tool, "explore-mutate")
        events = monitoring.events
        monitoring.register_callback(self.tool, events.PY_START, self._started)
        monitoring.register_callback(self.tool, events.PY_RESUME, self._started)
        monitoring.register_callback(self.tool, events.LINE, self._line)
        # PY_RESUME too: a generator that started before this plugin loaded (an `addopts = -p`
        # plugin, a .pth) only ever resumes, and coverage.py's tracer sees its lines
        monitoring.set_events(self.tool, events.PY_START | events.PY_RESUME)

    def stop(self):
        if self.tool is None:
            return
        monitoring = self.monitoring
        monitoring.set_events(self.tool, 0)
        for code in list(self._watched.values()):  # a thread's callback may still be adding one
            monitoring.set_local_events(self.tool, code, 0)
        for event in (monitoring.events.PY_START, monitoring.events.PY_RESUME, monitoring.events.LINE):
            monitoring.register_callback(self.tool, event, None)
        monitoring.free_tool_id(self.tool)
        self.tool = None

    def _started(self, code, offset):  # PY_START and PY_RESUME
        if self.tool is None:  # stopped while a thread was on its way here
            return self.monitoring.DISABLE
        if id(code) not in self._watched and self.wanted(code.co_filename) is not None:
            self._watched[id(code)] = code
            self.monitoring.set_local_events(self.tool, code, self.monitoring.events.LINE)
        return self.monitoring.DISABLE

    def _line(self, code, line):
        rel = self.wanted(code.co_filename)
        self.lines.setdefault(rel, {}).setdefault(line, set()).add(self._context)
        return self.monitoring.DISABLE
