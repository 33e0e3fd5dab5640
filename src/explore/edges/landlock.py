"""Landlock: the sandbox of a machine without bubblewrap (Linux ≥ 5.13, unprivileged, nothing to
install). A process restricts itself and every process it starts; explore cannot restrict a child
from outside, so a confined command starts behind this file run as a tiny launcher:

    python -I -S landlock.py <writable path>… -- cmd args…
      prctl(PR_SET_NO_NEW_PRIVS) ─► landlock_create_ruleset ─► landlock_add_rule per path ─► landlock_restrict_self ─► exec cmd

(preexec_fn is not safe in a process with threads, and explore has them). The rules are Codex's
(codex-rs/linux-sandbox): every write right the kernel knows is handled; the whole file system
keeps read and execute; the writable paths get every right; /dev keeps writing to its existing
devices (/dev/null, a terminal) and /dev/shm stays writable (multiprocessing's semaphores).
Anything else — the user's repository, its git dir and object store, the worktree's git admin
folder, the home — is read-only: the kernel answers EACCES.

This module imports nothing of explore and nothing outside the standard library: it runs under
`-I -S`, before the command, in the child only.
"""

from __future__ import annotations

import ctypes
import os
import sys

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
"""The syscall numbers (the same on every architecture: the generic table)."""
PR_SET_NO_NEW_PRIVS = 38
VERSION_FLAG = 1
RULE_PATH_BENEATH = 1
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
READ = EXECUTE | READ_FILE | READ_DIR
WRITE_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
"""Every right each ABI knows (2 adds REFER, 3 TRUNCATE, 5 IOCTL_DEV; newer ABIs add none for files)."""
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The rights a rule on a file (not a folder) may carry."""
DEVICES = "/dev"
SHARED_MEMORY = "/dev/shm"


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The Landlock ABI the kernel offers, 0 when none (not Linux, too old, or disabled at boot)."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    found = libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(VERSION_FLAG))
    return max(int(found), 0)


def restrict(writable: list[str]) -> None:
    """Restrict this process (and what it starts) to writing only beneath writable; OSError when the
    kernel refuses."""
    version = abi()
    if version < 1:
        raise OSError("Landlock is not available in this kernel")
    everything = WRITE_BY_ABI[min(version, 5)]
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    handled = ctypes.c_uint64(everything)  # struct landlock_ruleset_attr, its first field only
    ruleset = libc.syscall(CREATE_RULESET, ctypes.byref(handled), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        rules = [("/", READ), (DEVICES, READ | WRITE_FILE | TRUNCATE | IOCTL_DEV), (SHARED_MEMORY, everything)]
        rules += [(path, everything) for path in writable]
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # not there: nothing to allow
            try:
                if not os.path.isdir(path):
                    access &= FILE_RIGHTS
                rule = _PathBeneath(access & everything, fd)
                if libc.syscall(
                    ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), 0
                ):
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            finally:
                os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)):
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def argv(writable: list[str], cmd: list[str]) -> list[str]:
    """cmd behind the launcher: restricted to writing beneath writable, then exec'd."""
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), *writable, "--", *cmd]


def main(args: list[str]) -> None:
    cut = args.index("--")  # a writable path is absolute: never "--"
    writable, cmd = args[:cut], args[cut + 1 :]
    try:
        restrict(writable)
    except OSError as exc:
        sys.stderr.write(f"explore: the Landlock sandbox could not be set up: {exc}\n")
        os._exit(126)  # never run the command unconfined
    try:
        os.execvp(cmd[0], cmd)
    except OSError as exc:
        sys.stderr.write(f"{cmd[0]}: {exc.strerror}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
