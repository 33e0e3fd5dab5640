"""What a run does not need, it does not import: explore's start-up is paid on every run, before the
baseline can start. A fresh interpreter imports what `explore run --agent mutate` imports (the
command group, the session, the loop, the live view, mutate, the local executor, the gate); the
modules below are only for other generators, executors or flags, and must not come along."""

from __future__ import annotations

import json
import subprocess
import sys

RUN_MODULES = (
    "explore.cli.commands",
    "explore.cli.session",
    "explore.cli.live",
    "explore.cli.gate",
    "explore.run.loop",
    "explore.generators.mutate.generator",
    "explore.executors.local",
)
NOT_FOR_A_MUTATE_RUN = {
    "anthropic": "--agent anthropic",
    "httpx": "--agent anthropic",
    "ray": "--executor ray",
    "explore.generators.anthropic": "--agent anthropic",
    "explore.generators.agents": "--agent claude-code and the other agent CLIs",
    "explore.executors.ray": "--executor ray",
    "explore.run.debug_reports": "--reports-dir",
    "explore.cli.bench_render": "explore bench",
    "doctest": "a changed file with collected doctests (decide/testcode.doctests)",
    "matplotlib": "explore bench --chart",
}


def test_a_mutate_run_imports_none_of_what_other_runs_need() -> None:
    code = f"import importlib, json, sys\nfor name in {RUN_MODULES!r}:\n    importlib.import_module(name)\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(json.loads(done.stdout))
    assert set(RUN_MODULES) <= loaded
    pulled = {name: why for name, why in NOT_FOR_A_MUTATE_RUN.items() if name in loaded}
    assert not pulled, f"imported by a mutate run but only needed for: {pulled}"


def test_version_and_help_import_no_pydantic() -> None:
    """`explore --version` and `explore --help` import the command group alone: the run's models
    (pydantic, model.runstate) came with it through model.errors — 1.9 s of 2.6 s at load 14."""
    code = (
        "import json, sys\nimport explore.cli.commands\n"
        "print(json.dumps([n for n in sys.modules if n.startswith(('pydantic', 'explore.model.runstate'))]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == []


BEFORE_THE_BASELINE = (
    "explore.cli.commands",
    "explore.cli.session",
    "explore.cli.live",
    "explore.run.repair",
    "explore.executors.local",
    "explore.generators.command",
)
"""What `explore run` imports before its baseline's first pytest process (cli/session.execute's imports)."""


def test_the_iterations_modules_are_imported_beside_the_baseline_not_before_it() -> None:
    """The fan-out and the iteration's steps are imported on a thread while the baseline's suite runs
    (run/modules_ahead): before it, they were 0.05-0.14 s of a cachetools floor run's start at load 3-5."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {BEFORE_THE_BASELINE!r}:\n    importlib.import_module(name)\n"
        "before = sorted(sys.modules)\n"
        "from explore.run.modules_ahead import import_ahead\n"
        "import_ahead().join()\n"
        "print(json.dumps([before, sorted(sys.modules)]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    before, after = (set(names) for names in json.loads(done.stdout))
    ahead = {
        "explore.fanout.scheduler",
        "explore.fanout.candidate",
        "explore.run.iteration",
        "explore.run.beside",
        "explore.run.reports",
        "explore.model.summary",
    }
    assert not ahead & before, f"imported before the baseline: {sorted(ahead & before)}"
    assert ahead <= after, f"not imported ahead: {sorted(ahead - after)}"
