"""The hard per-test limit, watched from outside the test process (started by _explore_test_limit).

`python -I -S _explore_watchdog.py PID STACK_PATH RECORD DUMP_SIGNAL EXIT_SIGNAL`, stdin the read end
of a pipe from the test process. The test process writes one line per test: a JSON object (`nodeid`,
`after`: seconds to the hard limit, `message`, `duration`, `hangs`) as the test starts, `-` as it ends.
The watchdog sleeps in select() on that pipe (no CPU, no thread in the test process) and reads its own
clock, which nothing in the test process can patch. Past a test's hard limit it:

1. appends the `hard_timeout` entry to the record (explore reads it: the test, the hangs' state);
2. sends DUMP_SIGNAL, on which faulthandler (registered by the plugin, C code: it runs even while the
   test is stuck) writes every thread's stack to STACK_PATH, and waits for the file to stop growing;
3. sends EXIT_SIGNAL, whose handler ends the process with HARD_EXIT at the next bytecode (a test that
   swallowed the soft limit's exception, or ignores SIGALRM);
4. if the pipe has not closed (the process is gone) within a grace, sends SIGKILL (C code that never
   returns to Python): explore reads the record and treats the run as ended by the hang.

End of input (the test process has exited, or closed the pipe at its end): the watchdog exits.
Standalone: stdlib only, any Python 3 the project's pytest runs on.
"""

import json
import os
import select
import signal
import sys
import time

KILL_GRACE = 2.0
"""Seconds the process has, after EXIT_SIGNAL, to end itself before SIGKILL."""
DUMP_WAIT = 1.0
"""Seconds at most to wait for faulthandler's stack file to be written."""


def main(argv):
    pid, stack, record = int(argv[1]), argv[2], argv[3]
    dump_signal, exit_signal = int(argv[4]), int(argv[5])
    current, deadline, pending = None, 0.0, b""
    while True:
        timeout = None if current is None else max(deadline - time.monotonic(), 0.0)
        ready, _, _ = select.select([0], [], [], timeout)
        if ready:
            chunk = os.read(0, 65536)
            if not chunk:
                return 0
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                if line.strip() == b"-":
                    current = None
                elif line.strip():
                    current = json.loads(line.decode("utf-8"))
                    deadline = time.monotonic() + float(current["after"])
            continue
        if current is not None:
            give_up(pid, current, stack, record, dump_signal, exit_signal)
            return 0


def give_up(pid, current, stack, record, dump_signal, exit_signal):
    if record:
        entry = {
            "kind": "hard_timeout",
            "nodeid": current["nodeid"],
            "message": current["message"],
            "stack": stack or None,
            "duration": current["duration"],
            "hangs": current["hangs"],
        }
        fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(fd, (json.dumps(entry) + "\n").encode())
        os.close(fd)
    if not _signal(pid, dump_signal):
        return
    _wait_written(stack)
    if not _signal(pid, exit_signal):
        return
    if not select.select([0], [], [], KILL_GRACE)[0]:
        _signal(pid, signal.SIGKILL)
        return
    while os.read(0, 65536):  # a last line written as it died: wait for the end of input
        if not select.select([0], [], [], KILL_GRACE)[0]:
            _signal(pid, signal.SIGKILL)
            return


def _signal(pid, number):
    try:
        os.kill(pid, number)
        return True
    except OSError:  # already gone
        return False


def _wait_written(stack):
    """Until the stack file has been written and stopped growing (faulthandler writes it in C, at once)."""
    end, size, still = time.monotonic() + DUMP_WAIT, -1, 0
    while time.monotonic() < end and stack:
        try:
            now = os.stat(stack).st_size
        except OSError:
            now = 0
        still = still + 1 if now == size and now > 0 else 0
        if still >= 3:
            return
        size = now
        select.select([], [], [], 0.01)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
