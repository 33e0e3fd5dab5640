"""Per-test executed lines, for mutate's worker (`_worker.py`), in the *project's* interpreter
(stdlib only; coverage when the project has it). Copied next to the worker as
`_explore_mutate_lines`: coverage.py's contexts by node id, or a settrace fallback with the same
output shape."""

from __future__ import annotations

import fnmatch
import os


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
            real = os.path.realpath(filename)
            rel = real[len(self.root) :] if real.startswith(self.root) else None
            ok = rel is not None and not any(
                fnmatch.fnmatch(rel, p) or fnmatch.fnmatch("/" + rel, p) for p in self.omit
            )
            self.keep[filename] = rel if ok else None
        return self.keep[filename]

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
        return {"files": {f: {"contexts": {str(n): sorted(c) for n, c in ls.items()}} for f, ls in self.lines.items()}}
