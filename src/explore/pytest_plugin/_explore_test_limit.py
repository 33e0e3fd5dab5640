"""The per-test time limit of explore's pytest plugin (`--explore-test-timeout SEC`), and what it
does once a test has hung. Imported by explore_pytest_plugin from the same folder; standalone
like it (stdlib and pytest only, any pytest from 4.6 on, any Python pytest 4.6 runs on).

- nothing of explore runs in the test process while a test runs, so a suite that counts its threads
  or measures its own CPU time around a sleep (tqdm's performance tests) reads what it reads under
  plain pytest, and no limit reads a clock the tests can patch (freezegun, time-machine).
- soft limit: a kernel timer (setitimer, SIGALRM) armed for each phase of a test and disarmed at its
  end raises `ExploreTestTimeout` in the test's own thread (a BaseException, so `except Exception` in
  the test does not swallow it); the test fails with the stack of where it was stuck and the session
  goes on. Skipped while another timer owns SIGALRM (pytest-timeout, the test's own).
- hard limit: a watchdog process outside (_explore_watchdog, started with the session, told of each
  test's start and end through a pipe), for a test that ignores the signal (C code, `except
  BaseException`, SIGALRM ignored): past the limit plus a grace it records the test's id, has
  faulthandler (registered here on a real-time signal) write every thread's stack to
  `<record>.stack` and ends the process: HARD_EXIT from a signal handler that does nothing else, or
  SIGKILL if that cannot run; explore then runs the rest of the suite without that test.
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
import subprocess
import sys
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
WATCHDOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_explore_watchdog.py")
_RT = getattr(signal, "SIGRTMIN", None)  # real-time signals, which no test suite uses
DUMP_SIGNAL = _RT + 3 if _RT is not None else getattr(signal, "SIGUSR2", None)
EXIT_SIGNAL = _RT + 4 if _RT is not None else getattr(signal, "SIGUSR1", None)
"""The watchdog's signals: on the first faulthandler writes every thread's stack (C code, whatever the
test does); on the second the process ends with HARD_EXIT (the watchdog sends SIGKILL if it cannot)."""
_CLOCK = (time.perf_counter,)
"""How long a test took, for the lowered limit: taken at import, before any test code runs, and
kept where a clock-freezing library does not look (freezegun replaces module attributes equal to
the real functions; time-machine patches time.time, monotonic and clock_gettime, not perf_counter)."""


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
    """Nothing of explore runs in the test process while a test runs: the soft limit is a kernel
    timer armed for each phase of a test (setup, call, teardown) and disarmed at its end, the hard
    limit a watchdog process outside (_explore_watchdog), told of each test's start and end through a
    pipe. A suite that counts its threads or measures its own CPU time around a sleep reads what it
    reads under plain pytest, and the limits read no clock the tests can patch (the soft one is the
    kernel's timer, the watchdog reads its own process's clock)."""

    def __init__(self, policy, record):
        self.policy = policy
        self.record = record
        self.stack_path = f"{record}.stack" if record else None
        self.current: tuple[str, float, float] | None = None
        """(node id, the soft limit's seconds left, limit) of the running test."""
        self.fired = False
        self.failed = False
        self.main = threading.main_thread().ident
        self.took = 0.0
        self.watchdog = None
        self._start_watchdog()

    def _start_watchdog(self):
        if DUMP_SIGNAL is None or EXIT_SIGNAL is None or threading.get_ident() != self.main:
            return  # no signals to send (Windows), or not the main thread: the soft limit alone
        stack = os.open(self.stack_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if self.stack_path else 2
        faulthandler.register(DUMP_SIGNAL, file=stack, all_threads=True, chain=False)
        signal.signal(EXIT_SIGNAL, _hard_exit)  # a process without it dies of the signal all the same
        command = [sys.executable, "-I", "-S", WATCHDOG, str(os.getpid()), self.stack_path or "", self.record or ""]
        command += [str(int(DUMP_SIGNAL)), str(int(EXIT_SIGNAL))]
        try:
            self.watchdog = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, bufsize=0
            )
        except OSError as error:  # no hard limit then; the soft one and explore's job limit remain
            os.write(2, f"explore: the per-test watchdog did not start ({error})\n".encode())

    def _tell(self, line):
        if self.watchdog is None:
            return
        try:
            os.write(self.watchdog.stdin.fileno(), line.encode() + b"\n")
        except OSError:  # the watchdog is gone: the soft limit remains
            self.watchdog = None

    def pytest_unconfigure(self, config):
        if self.watchdog is not None:
            self.watchdog.stdin.close()  # end of input: the watchdog exits
            try:
                self.watchdog.wait(5)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
            self.watchdog = None

    # -- per test ---------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.fired = self.failed = False
        limit = self.policy.next_limit()
        after = limit + grace(limit, self.policy.lowered)
        hung = Policy(**vars(self.policy))
        hung.timed_out(after)
        message = f"{MARK}: {self.policy.describe(limit)} and ignored the signal; its process was ended"
        entry = {"nodeid": item.nodeid, "after": after, "message": message, "duration": after, "hangs": hung.state()}
        self._tell(json.dumps(entry))
        self.current = (item.nodeid, limit, limit)
        self.took = 0.0
        try:
            yield
        finally:
            self._tell("-")
            self.current = None
            if self.fired:
                self.policy.timed_out(self.took)
            elif not self.failed:
                self.policy.passed(self.took)

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
        remaining = current[1] if current else 0.0
        usable = (
            hasattr(signal, "setitimer")
            and threading.get_ident() == self.main
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0
            and not self.fired
        )
        started = _CLOCK[0]()
        if usable:
            previous = signal.signal(signal.SIGALRM, self._alarm)
            signal.setitimer(signal.ITIMER_REAL, max(remaining, 0.001))
            armed = True
        try:
            yield
        finally:
            took = _CLOCK[0]() - started
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(
                    signal.SIGALRM, signal.SIG_DFL if previous is None else previous
                )  # None: set outside Python
            self.took += took
            if current is not None and self.current is current:
                self.current = (current[0], current[1] - took, current[2])

    def _alarm(self, signum, frame):
        __tracebackhide__ = True  # the stack ends where the test was stuck, not in this handler
        self.fired = True
        current = self.current
        raise ExploreTestTimeout(self.policy.describe(current[2] if current else self.policy.limit))


def _hard_exit(signum, frame):
    """The watchdog's EXIT_SIGNAL, after faulthandler wrote the stacks: end the process now. Nothing
    may run the project's code from here: no collection (a `__del__` may wait on a lock the stuck
    test holds), no atexit, no finally."""
    gc.disable()
    os._exit(HARD_EXIT)
