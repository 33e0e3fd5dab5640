"""Screening mutants against tests: a pre-imported worker that forks per mutant (the default),
or a fresh `python -m pytest` per mutant (the baseline the benchmark measures it against).

Either way the mutant never touches the disk: the child puts a finder first on sys.path that
serves the mutated file's text from memory, so no stale bytecode and no file to restore.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from ...decide import parsing
from ...edges import homes, procs
from .localise import PLUGIN_NAME, plugin_env

GUARD_S = 30.0
"""Extra time the worker itself gets past a mutant's timeout before explore kills it."""


@dataclass
class Verdict:
    """What one mutant did to the tests it was screened against."""

    status: str
    """ok | timeout | crash"""
    outcomes: dict[str, str] = field(default_factory=dict)
    duration_s: float = 0.0
    error: str | None = None
    swapped: bool = False
    """The worker swapped the mutant into its imported functions (no import, no collection)."""
    tests_s: float | None = None
    """The tests' own time inside the worker's child (no fork, import or collection), when told."""
    stuck: str | None = None
    """A `per_test` job that timed out: the test that overran its timeout (None: none had started)."""

    def fixed(self, phase1: list[str]) -> list[str]:
        return [t for t in phase1 if self.outcomes.get(t) == "passed"] if self.status == "ok" else []

    def broken(self, phase2: list[str]) -> list[str]:
        return [t for t in phase2 if self.outcomes.get(t) == "failed"]


@dataclass
class Job:
    files: dict[str, str]
    """Absolute path → mutated text."""
    phase1: list[str]
    phase2: list[str]
    timeout: float
    giveup: int = 3
    memory_mb: int = 1024
    stop: bool = True
    """False to run every test whatever happens (calibrating the timeout)."""
    per_test: bool = False
    """The timeout bounds each test, not the job (the baseline's rerun): a verdict `timeout` keeps
    the outcomes of the tests that ended before and names the one that overran (`stuck`)."""

    def request(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "phase1": self.phase1,
            "phase2": self.phase2,
            "stop": self.stop,
            "timeout": self.timeout,
            "giveup": self.giveup,
            "memory_mb": self.memory_mb,
            **({"per_test": True} if self.per_test else {}),
        }

    def limit_s(self) -> float:
        """Seconds the worker may take to answer, past which explore ends it."""
        tests = len(self.phase1) + len(self.phase2) if self.per_test else 1
        return self.timeout * max(1, tests) + GUARD_S


class Slot(Protocol):
    """One lane of screening; a screener has as many as it runs mutants at once."""

    async def screen(self, job: Job) -> Verdict: ...


class Deferred:
    """A slot busy with something else first (measuring the mutant timeout): screening starts on
    the other slots, and this one's lane joins once `ready` is set."""

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.ready = anyio.Event()

    async def screen(self, job: Job) -> Verdict:
        return await self.slot.screen(job)


def _verdict(answer: dict[str, Any], started: float) -> Verdict:
    status = answer.get("status", "crash")
    if status == "ok" and answer.get("exit") not in (0, 1, 2) and not answer.get("outcomes"):
        status = "crash"  # pytest usage error or internal error: nothing was learnt
    return Verdict(
        status,
        answer.get("outcomes") or {},
        time.monotonic() - started,
        answer.get("error"),
        bool(answer.get("swapped")),
        answer.get("duration") if isinstance(answer.get("duration"), (int, float)) else None,
        answer.get("stuck") if isinstance(answer.get("stuck"), str) else None,
    )


class ForkWorker:
    """`_worker.py serve` in the project's interpreter; one request at a time."""

    def __init__(
        self, python: str, workdir: Path, run_dir: Path, preload: list[str], tracker: procs.ProcessTracker | None
    ):
        self.python, self.workdir, self.run_dir = python, workdir, run_dir
        self.preload, self.tracker = preload, tracker
        self.process: Process | None = None
        self.reader: BufferedByteReceiveStream | None = None
        self.warm_s = 0.0
        self.home: Path | None = None
        """The worker's private home folder (homes.py)."""
        self.overridden: list[str] = []
        """The user's pytest options the worker turned off (from its hello)."""
        self.collects = False
        """The worker collects each test file once itself and gives a child the seconds that took
        past its timeout (from its hello): a timeout need not allow for collecting."""

    async def start(self) -> None:
        if self.home is not None:
            homes.remove(self.home)
        self.home = homes.create()  # the worker's and its children's, until aclose
        env = {
            **os.environ,
            **homes.env_for(self.home),
            **plugin_env(self.workdir, self.run_dir),
            "EXPLORE_MUTATE_PRELOAD": json.dumps(self.preload),
            "EXPLORE_MUTATE_PYCACHE": str(self.run_dir / "pycache"),
        }
        script = Path(self.run_dir) / "plugin" / f"{PLUGIN_NAME}.py"
        log = open(self.run_dir / "worker.log", "ab")  # noqa: SIM115 (the process owns it)
        try:
            self.process = await anyio.open_process(
                [self.python, str(script), "serve", str(self.workdir)],
                cwd=self.workdir,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
            )
        finally:
            log.close()
        if self.tracker is not None:
            self.tracker.pids.add(self.process.pid)
        assert self.process.stdout is not None
        self.reader = BufferedByteReceiveStream(self.process.stdout)
        with anyio.fail_after(120):
            hello = json.loads(await self.reader.receive_until(b"\n", 2**20))
        self.warm_s = float(hello.get("warm_s", 0.0))
        self.overridden = list(hello.get("overridden") or [])
        self.collects = bool(hello.get("collects"))

    async def screen(self, job: Job) -> Verdict:
        started = time.monotonic()
        if self.process is None:
            await self.start()
        assert self.process is not None and self.process.stdin is not None and self.reader is not None
        try:
            await self.process.stdin.send((json.dumps(job.request()) + "\n").encode())
            with anyio.fail_after(job.limit_s()):
                answer = json.loads(await self.reader.receive_until(b"\n", 2**26))
        except (
            TimeoutError,
            anyio.EndOfStream,
            anyio.BrokenResourceError,
            anyio.IncompleteRead,
            OSError,
            ValueError,
        ) as exc:
            await self.aclose()  # restarted on the next job
            return Verdict("crash", duration_s=time.monotonic() - started, error=f"worker lost: {type(exc).__name__}")
        except BaseException:
            await self.aclose(at_once=True)  # cancelled mid-answer: out of step, and busy (no time to wait)
            raise
        return _verdict(answer, started)

    async def refresh(self, changed: list[str]) -> None:
        """Between iterations: the children load every project module from disk anyway, so the
        worker stays unless it imported a changed file itself (a conftest's import): then it
        ends and starts afresh on the next job."""
        if self.process is None:
            return
        assert self.process.stdin is not None and self.reader is not None
        try:
            await self.process.stdin.send((json.dumps({"changed": changed}) + "\n").encode())
            with anyio.fail_after(GUARD_S):
                stale = bool(json.loads(await self.reader.receive_until(b"\n", 2**20)).get("stale"))
        except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError, anyio.IncompleteRead, OSError, ValueError):
            stale = True
        if stale:
            await self.aclose()

    async def aclose(self, at_once: bool = False) -> None:
        """End the worker: on end of its input, given two seconds to go; at once, killed (it is
        busy with a request it would finish first)."""
        with anyio.CancelScope(shield=True):
            home, self.home = self.home, None
            if self.process is None:
                if home is not None:
                    homes.remove(home)
                return
            process, self.process = self.process, None
            if at_once:
                procs.kill_tree(process.pid, wait=False)
            if process.stdin is not None:
                try:
                    await process.stdin.aclose()  # the worker ends on end of input
                except (OSError, anyio.BrokenResourceError):
                    pass
            with anyio.move_on_after(2):
                await process.wait()
            # killed, not waited for: asyncio reaps its own child (aclose), and a wait here raced
            # its watcher ("WARNING asyncio: Unknown child process pid …" during screening)
            members = procs.kill_tree(process.pid, wait=False)[1:] if process.returncode is None else []
            await process.aclose()
            await procs.wait_gone(members)
            if self.tracker is not None:
                self.tracker.pids.discard(process.pid)
            if home is not None:
                homes.remove(home)


class FreshSlot:
    """A fresh `python -m pytest` per mutant, with the mutant served from memory by the plugin."""

    def __init__(self, python: str, workdir: Path, run_dir: Path, tracker: procs.ProcessTracker | None, lane: int):
        self.python, self.workdir, self.run_dir, self.tracker, self.lane = python, workdir, run_dir, tracker, lane
        self.count = 0

    async def screen(self, job: Job) -> Verdict:
        started = time.monotonic()
        self.count += 1
        request = self.run_dir / f"fresh-{self.lane}.request.json"
        result = self.run_dir / f"fresh-{self.lane}.result.json"
        request.write_text(json.dumps(job.request()), encoding="utf-8")
        result.unlink(missing_ok=True)
        env = {
            **plugin_env(self.workdir, self.run_dir),
            "EXPLORE_MUTATE_REQUEST": str(request),
            "EXPLORE_MUTATE_RESULT": str(result),
        }
        argv = [
            self.python,
            "-m",
            "pytest",
            "-p",
            PLUGIN_NAME,
            "-q",
            "-p",
            "no:cacheprovider",
            "--tb=no",
            "-rN",
            *job.phase1,
            *job.phase2,
        ]
        done = None
        with anyio.move_on_after(job.timeout), homes.private_home() as home:
            done = await procs.run(
                argv, self.workdir, env={**home, **env}, tracker=self.tracker, memory_limit=job.memory_mb * 2**20
            )
        if done is None:
            return Verdict("timeout", duration_s=time.monotonic() - started)
        if not result.exists():
            return Verdict("crash", duration_s=time.monotonic() - started, error=done.output_tail[-300:])
        answer = json.loads(result.read_text(encoding="utf-8"))
        answer["exit"] = done.exit_code
        return _verdict(answer, started)


class Screener:
    """A set of slots of one design, opened and closed together."""

    def __init__(
        self,
        design: str,
        python: str,
        workdir: Path,
        run_dir: Path,
        lanes: int,
        preload: Sequence[str] = (),
        tracker: procs.ProcessTracker | None = None,
    ):
        run_dir.mkdir(parents=True, exist_ok=True)
        self.design = design
        if design == "fork":
            self.slots: list[Slot] = [
                ForkWorker(python, workdir, run_dir, list(preload), tracker) for _ in range(lanes)
            ]
        elif design == "fresh":
            self.slots = [FreshSlot(python, workdir, run_dir, tracker, i) for i in range(lanes)]
        else:
            raise ValueError(f"unknown screening design {design!r}: choose fork or fresh")

    async def __aenter__(self) -> Screener:
        if self.design == "fork":
            try:
                async with anyio.create_task_group() as group:
                    for slot in self.slots:
                        if isinstance(slot, ForkWorker):  # every one, in this design
                            group.start_soon(slot.start)
            except BaseException:  # cancelled (the baseline ended the run) or one failed: none has work to finish
                await self.aclose(at_once=True)
                raise
        return self

    async def refresh(self, changed: list[str]) -> None:
        """Reuse across iterations: each worker keeps its warm state unless a changed file is
        one it imported."""
        for slot in self.slots:
            if isinstance(slot, ForkWorker):
                await slot.refresh(changed)

    def collects(self) -> bool:
        """Every worker collects the tests itself and allows a child the time that took (fork
        design, pytest configured once): a mutant's timeout need only cover its tests' time."""
        return self.design == "fork" and all(isinstance(s, ForkWorker) and s.collects for s in self.slots)

    def pids(self) -> list[int]:
        return [slot.process.pid for slot in self.slots if isinstance(slot, ForkWorker) and slot.process is not None]

    def overridden(self) -> list[str]:
        found: list[str] = []
        for slot in self.slots:
            found += [o for o in getattr(slot, "overridden", []) if o not in found]
        return found

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self, at_once: bool = False) -> None:
        """End the workers: on end of their input, or `at_once`, killed (half-started ones have
        nothing to finish, and each graceful end may take its two seconds while the run waits)."""
        for slot in self.slots:
            if isinstance(slot, ForkWorker):
                await slot.aclose(at_once)


def third_party_imports(root: Path, files: list[str]) -> list[str]:
    """Top-level modules the project imports that are not its own: the fork worker imports
    them once so no mutant pays for them (the project's own modules must stay unimported)."""
    names: set[str] = set()
    for rel in files:
        try:
            tree = parsing.parse((root / rel).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    local = {
        p.stem if p.suffix == ".py" else p.name
        for base in (root, root / "src")
        if base.is_dir()
        for p in base.iterdir()
    }
    return sorted(n for n in names if n not in local and n != "__future__")
