"""Landlock: the sandbox of a machine without bubblewrap (Linux ≥ 5.13, unprivileged, nothing to
install). A process restricts itself and every process it starts; explore restricts a candidate's
process in the child, between fork and exec:

    explore: Ruleset(writable paths) ─ landlock_create_ruleset, landlock_add_rule per path (an fd)
      child (subprocess's preexec_fn): Ruleset.enter ─ prctl(PR_SET_NO_NEW_PRIVS), landlock_restrict_self ─► exec cmd
    explore: Ruleset.close once the child has started

Everything that may allocate, open a file or load a library is done in explore before the fork;
the child makes two system calls through function pointers resolved beforehand, so nothing in it
waits on a lock another of explore's threads held at the fork (why preexec_fn is unsafe in
general). A refusal raises in the child: subprocess reports it in the parent and the command never
runs unconfined. (Until issue 37's second round a Python launcher did this after an exec of its
own: one more interpreter start, ~25 ms CPU, per confined process.)

The rules are Codex's (codex-rs/linux-sandbox): every write right the kernel knows is handled; the
whole file system keeps read and execute; the writable paths get every right; /dev keeps writing to
its existing devices (/dev/null, a terminal) and /dev/shm stays writable (multiprocessing's
semaphores). Anything else — the user's repository, its git dir and object store, the worktree's
git admin folder, the home — is read-only: the kernel answers EACCES.

This module imports nothing of explore and nothing outside the standard library.
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


class Ruleset:
    """A Landlock ruleset that lets a process write only beneath writable, made in this process (an
    fd, closed by close()); enter() restricts the calling process — meant for the child between fork
    and exec. OSError when the kernel refuses to make it."""

    def __init__(self, writable: list[str]) -> None:
        version = abi()
        if version < 1:
            raise OSError("Landlock is not available in this kernel")
        everything = WRITE_BY_ABI[min(version, 5)]
        libc = _libc()
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long
        self._prctl = libc.prctl
        self._prctl.restype = ctypes.c_int
        handled = ctypes.c_uint64(everything)  # struct landlock_ruleset_attr, its first field only
        fd = int(self._syscall(CREATE_RULESET, ctypes.byref(handled), ctypes.c_size_t(8), ctypes.c_uint32(0)))
        if fd < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = fd  # O_CLOEXEC: gone from the child at its exec, after enter()
        try:
            rules = [("/", READ), (DEVICES, READ | WRITE_FILE | TRUNCATE | IOCTL_DEV), (SHARED_MEMORY, everything)]
            rules += [(path, everything) for path in writable]
            for path, access in rules:
                self._allow(path, access, everything)
        except OSError:
            self.close()
            raise
        # everything enter() passes, made now: the child allocates nothing
        self._args = (
            (
                ctypes.c_int(PR_SET_NO_NEW_PRIVS),
                ctypes.c_ulong(1),
                ctypes.c_ulong(0),
                ctypes.c_ulong(0),
                ctypes.c_ulong(0),
            ),
            (ctypes.c_long(RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint32(0)),
        )

    def _allow(self, path: str, access: int, everything: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # not there: nothing to allow
        try:
            if not os.path.isdir(path):
                access &= FILE_RIGHTS
            rule = _PathBeneath(access & everything, fd)
            if self._syscall(ADD_RULE, ctypes.c_int(self.fd), ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), 0):
                raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
        finally:
            os.close(fd)

    def enter(self) -> None:
        """Restrict the calling process (and what it starts) to the ruleset; raises when refused."""
        no_new_privs, restrict = self._args
        if self._prctl(*no_new_privs):
            raise OSError("prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self._syscall(*restrict):
            raise OSError("landlock_restrict_self failed")

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
