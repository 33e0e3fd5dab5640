"""pytest configured once in mutate's worker (`_worker.py serve`), in the *project's*
interpreter (stdlib + pytest only, no explore import). Copied next to the worker as
`_explore_mutate_warm`: the parent configures pytest and starts its session once, collects each
test file once, and a forked child runs those items with the mutant swapped in (`_hotswap.py`)
— or collects afresh when that would not equal a fresh import.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from _explore_mutate_plugins import PYTEST_ARGS, Neutraliser, Recorder


class Warm:
    """pytest configured and its session started once, in the parent: every fork only collects
    its ids and runs them (about 20 ms against 200–600 ms for a whole `pytest.main`)."""

    def __init__(self):
        self.recorder = Recorder([], [], 10**6)
        self.neutraliser = Neutraliser()
        self.config: Any = None
        self.session: Any = None
        """pytest's Config and Session, through its private API (pytest 4.6 to 9): untyped here."""
        self.imported = set()
        self.live = None
        """The project's functions in this process (_hotswap.Live), when the helper is there."""
        self.items = {}
        """Node id → test item collected in this (the parent) process, for the children to run."""
        self.collected = set()
        self.loaded = set()
        """Real paths of the project's files imported here by that collection."""
        self.late_conftest = False
        """That collection loaded a conftest: pytest keeps it, with whatever it imported, so a
        child that cannot swap the mutant in runs a whole fresh pytest instead."""
        self.collect_s = 0.0
        """Seconds this process spent collecting (importing the project with it): what a child
        that cannot swap the mutant in spends again, on top of its tests' time."""

    def start(self):
        from _pytest.config import _prepareconfig
        from _pytest.main import Session

        try:
            import _explore_mutate_hotswap as hotswap
        except ImportError:
            hotswap = None
        self.live = hotswap.Live(os.getcwd()) if hotswap is not None else None
        sys.setprofile(self.live.profile if self.live is not None else None)  # conftests may run project code
        try:
            config = _prepareconfig(list(PYTEST_ARGS), plugins=[self.recorder, self.neutraliser])
            session = (
                Session.from_config(config) if hasattr(Session, "from_config") else Session(config)
            )  # pytest < 5.4
            config._do_configure()
            config.hook.pytest_sessionstart(session=session)
        finally:
            sys.setprofile(None)
        self.config, self.session = config, session
        self.refresh_imported()

    def refresh_imported(self):
        self.imported = {
            os.path.realpath(f) for f in (getattr(m, "__file__", None) for m in list(sys.modules.values())) if f
        }

    def usable_for(self, files):
        """Not when the warm-up imported a file the mutant changes (a conftest importing it)."""
        return self.session is not None and not any(os.path.realpath(f) in self.imported for f in files)

    def collect_here(self, ids, files):
        """In the parent, before forking: collect (once) the test files of `ids`, noting which of
        the project's functions run meanwhile, so that a child can run those items with the
        mutant swapped in, without importing the project or collecting again."""
        if self.live is None:
            return
        for path in files:
            self.live.original(path)  # compiled once here, not in every child
        wanted = {i.split("::", 1)[0] for i in ids if i not in self.items} - self.collected
        if not wanted:
            return
        self.collected |= wanted
        self.recorder.__init__([], [], 10**6)
        self.config.args = sorted(wanted)
        sys.setprofile(self.live.profile)
        started = time.monotonic()
        try:
            self.config.hook.pytest_collection(session=self.session)
        except BaseException:  # collection errors: those ids are not here, children collect them
            pass
        finally:
            sys.setprofile(None)
            self.collect_s += time.monotonic() - started
        self.items.update((item.nodeid, item) for item in self.session.items)
        self.loaded = {
            self.live.real(m.__file__) for m in list(sys.modules.values()) if getattr(m, "__file__", None)
        } - {None}
        self.late_conftest = self.late_conftest or any(
            os.path.basename(path) == "conftest.py" for path in self.loaded if path not in self.imported
        )
        self.live.index()

    def run_collected(self, request):
        """In a child: the items the parent collected, with the mutant swapped into the modules
        the parent imported; None when that is not the same as importing it afresh."""
        ids = list(request["phase1"]) + list(request["phase2"])
        if self.live is None or not ids or any(i not in self.items for i in ids):
            return None
        if not self.live.swap(request["files"], self.loaded):
            return None
        self.recorder.__init__(
            request["phase1"], request["phase2"], request.get("giveup", 10**6), request.get("stop", True)
        )
        self.recorder.session = self.session
        session = self.session
        session.items = [self.items[i] for i in ids]
        session.testsfailed, session.shouldstop, session.shouldfail = 0, False, False
        started = time.monotonic()
        try:
            self.config.hook.pytest_runtestloop(session=session)
        except BaseException:  # Interrupted (stop rule), a mutant's SystemExit
            pass
        return {
            "status": "ok",
            "exit": 1,
            "outcomes": self.recorder.outcomes,
            "duration": time.monotonic() - started,
            "swapped": True,
        }

    def forget_collected(self):
        """Drop the project's and tests' modules this process imported after its start-up (by a
        collection here), and the items: a child imports and collects afresh, or the parent
        collects again after the files changed."""
        if self.live is not None:
            for name, module in list(sys.modules.items()):
                path = getattr(module, "__file__", None)
                if path and self.live.real(path) and os.path.realpath(path) not in self.imported:
                    del sys.modules[name]
        self.items, self.collected, self.loaded, self.late_conftest = {}, set(), set(), False
        self.collect_s = 0.0

    def run(self, request):
        self.recorder.__init__(
            request["phase1"], request["phase2"], request.get("giveup", 10**6), request.get("stop", True)
        )
        self.recorder.session = self.session
        self.config.args = list(request["phase1"]) + list(request["phase2"])
        started = time.monotonic()
        try:
            self.config.hook.pytest_collection(session=self.session)
            self.config.hook.pytest_runtestloop(session=self.session)
        except BaseException:  # Interrupted (stop rule, collection errors), a mutant's SystemExit
            pass
        return {"status": "ok", "exit": 1, "outcomes": self.recorder.outcomes, "duration": time.monotonic() - started}
