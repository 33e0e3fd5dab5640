"""The pre-imported worker's loop (`_worker.py serve`), in the *project's* interpreter (stdlib +
pytest only, no explore import). Copied next to the worker as `_explore_mutate_serve`: one JSON
request per line on stdin, each screened in a forked child (its process group killed when it
overruns its timeout, and when it ends: what its tests started dies with it; its address space
capped), one JSON answer per line out.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import sys
import time

import _explore_mutate_loading as loading
import pytest
from _explore_mutate_plugins import PYTEST_ARGS, Neutraliser, Recorder
from _explore_mutate_warm import Warm

MAX_SLACK_S = 20.0
"""Most seconds a child gets past its timeout for collecting what the parent collected (below
explore's own guard, screen.GUARD_S)."""


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
    """Fork a child for one mutant; kill its process group when it ends (what its tests left
    running) or overruns request['timeout']
    (with `per_test`: when one test does — the child tells as each test starts and ends, and the
    answer to a hang holds the tests that ended before it and the one that hung, `stuck`)."""
    per_test = bool(request.get("per_test"))
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
            if per_test:
                Recorder.progress_fd = write_fd
                Recorder.exact = True
            result = screen(request, prepared)
        except BaseException as exc:  # a mutant may raise anything, even SystemExit
            result = {"status": "crash", "error": f"{type(exc).__name__}: {exc}"[:500]}
        data = json.dumps(result).encode() + (b"\n" if per_test else b"")
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
        os._exit(0)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    os.close(write_fd)
    slack = min(prepared.collect_s, MAX_SLACK_S) if prepared is not None else 0.0  # a child collecting afresh
    timeout = float(request.get("timeout", 5.0))
    deadline = time.monotonic() + timeout + slack
    chunks = []
    pending, ended, stuck = b"", {}, None
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
        if not per_test:
            chunks.append(chunk)
            continue
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            event = _event(line)
            if "start" in event:  # each test gets its own timeout
                stuck, deadline = event["start"], time.monotonic() + timeout
            elif "done" in event:
                if event.get("outcome"):
                    ended[event["done"]] = event["outcome"]
            else:
                chunks.append(line)  # the answer
    os.close(read_fd)
    if timed_out:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:  # whatever its tests started and left running: the child is not reaped yet, its group id not reused
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"status": "timeout", "outcomes": ended, "stuck": stuck} if per_test else {"status": "timeout"}
    try:
        return json.loads(b"".join(chunks).decode() or "null") or {
            "status": "crash",
            "error": f"child exit status {status}",
        }
    except ValueError:
        return {"status": "crash", "error": f"unreadable child report (status {status})"}


def _event(line):
    try:
        event = json.loads(line.decode())
    except ValueError:
        return {"status": "crash", "error": "unreadable child report"}
    return event if isinstance(event, dict) else {"status": "crash", "error": "unreadable child report"}


def serve(root, preload, pycache):
    """The pre-imported worker: one JSON request per line in, one JSON answer per line out."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    requests = os.fdopen(os.dup(0), "r")  # pytest's capture (as the project configures it) takes fd 0 and sys.stdin
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
    loading.cache_bytecode(pycache)
    hello = {
        "ready": True,
        "pid": os.getpid(),
        "warm_s": time.monotonic() - started,
        "mode": note,
        "overridden": prepared.neutraliser.overridden if prepared is not None else [],
        "collects": prepared is not None and prepared.live is not None,
    }
    proto.write(json.dumps(hello) + "\n")
    for line in requests:
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
