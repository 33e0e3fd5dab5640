"""The per-test time limit of explore's pytest plugin (`--explore-test-timeout SEC`), and what it
does once a test has hung. Imported by explore_pytest_plugin from the same folder; standalone
like it (stdlib and pytest only, any pytest from 4.6 on, any Python pytest 4.6 runs on).

- soft limit: SIGALRM in the test's own thread raises `ExploreTestTimeout` (a BaseException, so
  `except Exception` in the test does not swallow it); the test fails with the stack of where it
  was stuck and the session goes on. Skipped while another timer owns SIGALRM (pytest-timeout).
- hard limit: a watchdog thread, for a test that ignores the signal (C code, `except
  BaseException`): past the limit plus a grace it records the test's id, has faulthandler write
  every thread's stack to `<record>.stack` and ends the process with HARD_EXIT; explore then runs
  the rest of the suite without that test. Nothing there may run the project's code: the garbage
  collector is switched off first (a collection would run `__del__` methods, which may wait on a
  lock the stuck test holds), the stack is written by C code, and the watchdog polls with sleeps
  rather than waiting on a condition (whose wait allocates).
- after a hang (with `--explore-hang-floor SEC`): each further test gets a lowered limit, 5× the
  slowest passing test so far (or the one explore seeds from the baseline), at least the floor, at
  most the limit. Once the hung tests together have taken `--explore-hang-budget SEC`, the floor
  drops to an eighth. A suite whose every test loops then pays the limit once and the floor for
  each other test, not N times the limit. `--explore-hangs HUNG,SPENT,SLOWEST` starts a process
  where an earlier process of the same run left off: the record of a hard timeout carries the
  three numbers, so the run that goes on without the stuck test starts lowered.
"""

from __future__ import annotations

import faulthandler
import gc
import json
import os
import signal
import threading
import time

import pytest

HARD_EXIT = 86
MARK = "ExploreTestTimeout"
"""Named in every timed-out test's message: how explore tells a timeout from a failure."""
FACTOR = 5.0
"""The lowered limit: this many times the slowest passing test."""
SPENT_DIVISOR = 8.0
"""Past the hang budget, the floor is this many times smaller."""


class ExploreTestTimeout(BaseException):
    """A BaseException: a test's `except Exception` does not swallow it. Its name is MARK."""


def grace(limit, lowered=False):
    """Seconds the watchdog waits past the soft limit: the exception's unwinding, teardown."""
    return min(max(limit / 2, 1.0 if lowered else 2.0), 30.0)


def parse_hangs(text):
    """`HUNG,SPENT,SLOWEST` (explore writes it) as (int, float, float); empty or unreadable: zeros."""
    try:
        hung, spent, slowest = text.split(",")
        return max(int(hung), 0), max(float(spent), 0.0), max(float(slowest), 0.0)
    except ValueError:
        return 0, 0.0, 0.0


class Policy:
    """The limit of each test: the configured one until a test hangs, then lowered."""

    def __init__(self, limit, floor=0.0, budget=0.0, hung=0, spent=0.0, slowest=0.0):
        self.limit, self.floor, self.budget = limit, floor, budget
        self.hung, self.spent, self.slowest = hung, spent, slowest

    @property
    def lowered(self):
        return self.floor > 0 and self.hung > 0

    def next_limit(self):
        if not self.lowered:
            return self.limit
        return min(self.limit, max(self.current_floor(), FACTOR * self.slowest))

    def current_floor(self):
        spent = self.budget > 0 and self.spent >= self.budget
        return self.floor / SPENT_DIVISOR if spent else self.floor

    def passed(self, seconds):
        self.slowest = max(self.slowest, seconds)

    def timed_out(self, seconds):
        self.hung += 1
        self.spent += seconds

    def state(self):
        return f"{self.hung},{self.spent:.3f},{self.slowest:.3f}"

    def describe(self, limit):
        if limit >= self.limit or not self.lowered:
            return f"the test exceeded explore's per-test time limit of {_seconds(limit)}s"
        return (
            f"the test exceeded explore's per-test time limit of {_seconds(limit)}s, lowered from "
            f"{_seconds(self.limit)}s after {self.hung} hung test(s) ({FACTOR:g}x the slowest passing test, "
            f"at least {_seconds(self.current_floor())}s)"
        )


def _seconds(value):
    return f"{round(value, 2):g}"


class Limiter:
    POLL = 0.1
    """Seconds between the watchdog's looks at the clock (a sleep allocates nothing)."""

    def __init__(self, policy, record):
        self.policy = policy
        self.record = record
        self.stack_path = f"{record}.stack" if record else None
        self.current: tuple[str, float, float, float] | None = None
        """(node id, soft deadline, hard deadline, limit) of the running test; replaced whole, read without a lock."""
        self.fired = False
        self.failed = False
        self.main = threading.main_thread().ident
        threading.Thread(target=self._watch, name="explore-test-timeout", daemon=True).start()

    # -- per test ---------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.fired = self.failed = False
        limit = self.policy.next_limit()
        started = time.monotonic()
        hard = started + limit + grace(limit, self.policy.lowered)
        self.current = (item.nodeid, started + limit, hard, limit)
        try:
            yield
        finally:
            self.current = None
            took = time.monotonic() - started
            if self.fired:
                self.policy.timed_out(took)
            elif not self.failed:
                self.policy.passed(took)

    def pytest_runtest_logreport(self, report):
        if report.failed or report.skipped:
            self.failed = True  # a skipped or failing test's time says nothing of how slow passing tests are

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        yield from self._phase()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield from self._phase()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        yield from self._phase()

    def _phase(self):
        armed = False
        current = self.current
        remaining = (current[1] if current else 0) - time.monotonic()
        usable = (
            hasattr(signal, "setitimer")
            and threading.get_ident() == self.main
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0
            and not self.fired
        )
        if usable:
            previous = signal.signal(signal.SIGALRM, self._alarm)
            signal.setitimer(signal.ITIMER_REAL, max(remaining, 0.001))
            armed = True
        try:
            yield
        finally:
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(
                    signal.SIGALRM, signal.SIG_DFL if previous is None else previous
                )  # None: set outside Python

    def _alarm(self, signum, frame):
        __tracebackhide__ = True  # the stack ends where the test was stuck, not in this handler
        self.fired = True
        current = self.current
        raise ExploreTestTimeout(self.policy.describe(current[3] if current else self.policy.limit))

    # -- the watchdog ------------------------------------------------------------------------
    def _watch(self):
        while True:
            current = self.current
            if current is None:
                time.sleep(self.POLL)
                continue
            left = current[2] - time.monotonic()
            if left > 0:
                time.sleep(min(left, self.POLL))
                continue
            if self.current is current:
                self._give_up(current)

    def _give_up(self, current):
        gc.disable()  # before anything allocates: no collection, so no project __del__, runs from here on
        nodeid, soft, hard, limit = current
        fd = os.open(self.stack_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if self.stack_path else 2
        faulthandler.dump_traceback(file=fd, all_threads=True)
        message = f"{MARK}: {self.policy.describe(limit)} and ignored the signal; its process was ended"
        took = hard - soft + limit  # the limit, then the grace the watchdog gave it
        self.policy.timed_out(took)
        if self.record:
            entry = {
                "kind": "hard_timeout",
                "nodeid": nodeid,
                "message": message,
                "stack": self.stack_path,
                "duration": took,
                "hangs": self.policy.state(),
            }
            fd = os.open(self.record, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.write(fd, (json.dumps(entry) + "\n").encode())
        os.write(2, f"\n{message}: {nodeid}\n".encode())
        os._exit(HARD_EXIT)
