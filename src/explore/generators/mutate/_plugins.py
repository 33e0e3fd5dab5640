"""The pytest plugin objects of mutate's worker (`_worker.py`), in the *project's* interpreter
(stdlib + pytest only, no explore import). Copied next to the worker as `_explore_mutate_plugins`:
`Recorder` (runs failing tests before passing ones, records outcomes, stops once the verdict is
known), `Neutraliser` (turns off the user's options that would move tests out of this process or
stop or repeat them, and says which), and the arguments every run of the worker's pytest gets.
"""

from __future__ import annotations

import json
import os

import pytest


class Recorder:
    """Runs phase-1 ids (the failing tests) before phase-2 ids (passing tests covering the
    mutated lines) and stops as soon as the verdict is known."""

    progress_fd = None
    """In a forked child whose parent bounds each test (a rerun): the pipe to the parent, which
    gets a line as each test starts and ends, so a hang costs that test alone."""

    exact = False
    """In a rerun's child: outcomes as pytest's own report names them (`xfailed`, `xpassed`, a
    skip in setup `skipped`), not screening's (an xfail counts as `passed` there)."""

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

    def pytest_runtest_logstart(self, nodeid, location):
        self._tell({"start": nodeid})

    def pytest_runtest_logreport(self, report):
        nodeid = report.nodeid
        if report.failed:
            self.outcomes[nodeid] = "failed"
        elif self.exact and nodeid not in self.outcomes and (report.when == "call" or report.skipped):
            xfail = hasattr(report, "wasxfail")
            if report.passed:
                self.outcomes[nodeid] = "xpassed" if xfail else "passed"
            elif report.skipped:
                self.outcomes[nodeid] = "xfailed" if xfail else "skipped"
        elif report.when == "call" and nodeid not in self.outcomes:
            self.outcomes[nodeid] = "passed" if report.passed or hasattr(report, "wasxfail") else "skipped"
        if report.when == "teardown":
            self._tell({"done": nodeid, "outcome": self.outcomes.get(nodeid)})
            if self.stop:
                self._maybe_stop(nodeid)

    def _tell(self, event):
        if self.progress_fd is not None:
            data = (json.dumps(event) + "\n").encode()
            while data:
                data = data[os.write(self.progress_fd, data) :]

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
    *(["--no-header"] if PYTEST_VERSION >= (6,) else []),
]
"""Output capture stays as the project's configuration has it (pytest's default: `fd`), as in the
runs that score a candidate: a test that reads what a mutant writes to sys.stdout, or what
sys.stdout is, passes or fails here as it does there."""

COV = "--cov (pytest-cov)"
"""pytest-cov's own Coverage would take the tracer from mutate's (and slow every mutant down)."""

# (option dest, value that turns it off, how the user writes it)
NEUTRAL: tuple[tuple[str, object, str], ...] = (
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
