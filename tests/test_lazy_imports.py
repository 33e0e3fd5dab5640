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
