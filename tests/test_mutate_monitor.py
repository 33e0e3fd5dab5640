"""Issue 27.1: on Python 3.12+ mutate's per-test lines come from sys.monitoring (PEP 669), which
costs the baseline far less than coverage.py's trace function and records the same lines under
the same tests. The venv is real: built by the test from a Python 3.12+ on the machine, pytest,
coverage and pytest-json-report from the package index."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import assert_no_debris, built_once, make_repo, run_cli, venv_of
from explore.generators.mutate import localise

PYTHONS = ("3.12", "3.13", "3.14")
PACKAGES = ("pytest==8.3.5", "coverage==7.6.1", "pytest-json-report==1.5.0")


@pytest.fixture(scope="module")
def py312(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The python of a fresh Python 3.12+ venv holding pytest, coverage and pytest-json-report."""
    return built_once("py312", tmp_path_factory, lambda folder: venv_of(PYTHONS, PACKAGES, folder))


PROJECT = {
    "shop.py": (
        "RATE = 3\n"
        "\n"
        "\n"
        "class Cart:\n"
        "    def __init__(self):\n"
        "        self.items = []\n"
        "\n"
        "    def add(self, price, quantity=1):\n"
        "        self.items.extend([price] * quantity)\n"
        "        return self\n"
        "\n"
        "    def total(self):\n"
        "        return sum(self.items) * RATE\n"
        "\n"
        "\n"
        "def prices(cart):\n"
        "    for price in cart.items:\n"
        "        yield price\n"
    ),
    "tests/test_shop.py": (
        "import importlib\n"
        "import sys\n"
        "\n"
        "import shop\n"
        "\n"
        "\n"
        "def test_total():\n"
        "    assert shop.Cart().add(2, 2).total() == 12\n"
        "\n"
        "\n"
        "def test_prices():\n"
        "    assert list(shop.prices(shop.Cart().add(5))) == [5]\n"
        "\n"
        "\n"
        "def test_reimported():\n"
        "    del sys.modules['shop']\n"
        "    assert importlib.import_module('shop').RATE == 3\n"
    ),
}
TAKE_THE_TOOL_IDS = "import sys\nfor tool in range(6):\n    if sys.monitoring.get_tool(tool) is None:\n        sys.monitoring.use_tool_id(tool, 'taken')\n"
"""A sitecustomize that leaves sys.monitoring no free tool id: the plugin falls back to coverage.py."""


def per_test_lines(python: str, repo: Path, run_dir: Path, extra_path: str = "") -> dict:
    """The plugin's result of a baseline-mode pytest run in repo."""
    result = run_dir / "coverage-run.json"
    env = localise.coverage_env(None, run_dir, "baseline", result)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo), extra_path, env["PYTHONPATH"]]))
    subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", localise.PLUGIN_NAME],
        cwd=repo,
        env={**os.environ, **env},
        capture_output=True,
        timeout=300,
    )
    return json.loads(result.read_text())


def both_ways(python: str, repo: Path, tmp_path: Path) -> tuple[dict, dict]:
    """The plugin's results with sys.monitoring and, every tool id taken, with coverage.py."""
    monitored = per_test_lines(python, repo, tmp_path / "monitor")
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "sitecustomize.py").write_text(TAKE_THE_TOOL_IDS)
    covered = per_test_lines(python, repo, tmp_path / "coverage", str(taken))
    assert (monitored["tracer"], covered["tracer"]) == ("sys.monitoring", "coverage")
    return monitored, covered


def test_sys_monitoring_records_the_lines_coverage_py_records(tmp_path: Path, py312: str) -> None:
    repo = make_repo(tmp_path / "repo", PROJECT, python=py312)
    monitored, covered = both_ways(py312, repo, tmp_path)
    assert monitored["trace"] == covered["trace"]
    shop = monitored["trace"]["files"]["shop.py"]["contexts"]
    assert set(monitored["trace"]["files"]) == {"shop.py"}  # no test file, no `<frozen …>` module
    assert shop["1"] == ["", "tests/test_shop.py::test_reimported"]  # import time, and imported again
    assert shop["13"] == ["tests/test_shop.py::test_total"]
    assert shop["18"] == ["tests/test_shop.py::test_prices"]  # a generator's body
    assert shop["5"] == ["", "tests/test_shop.py::test_reimported"]  # a def runs at import, not when called
    assert "2" not in shop  # a blank line


def test_a_generator_started_before_the_plugin_is_measured_when_a_test_resumes_it(tmp_path: Path, py312: str) -> None:
    """An `addopts = -p` plugin loads before explore's: its generator only ever resumes under the
    monitor (PY_RESUME), and its lines count for the test that resumes it, as with coverage.py."""
    files = {
        "lib.py": "def gen():\n    x = 1\n    yield x\n    x = 2\n    yield x\n",
        "early_plugin.py": "import lib\n\nG = lib.gen()\nnext(G)\n",
        "pytest.ini": "[pytest]\naddopts = -p early_plugin\n",
        "tests/test_lib.py": "import early_plugin\n\n\ndef test_resume():\n    assert next(early_plugin.G) == 2\n",
    }
    repo = make_repo(tmp_path / "repo", files, python=py312)
    monitored, covered = both_ways(py312, repo, tmp_path)
    # coverage.py also lists early_plugin.py, measured with no line: it ran before coverage started
    assert monitored["trace"]["files"] == {f: c for f, c in covered["trace"]["files"].items() if c["contexts"]}
    assert monitored["trace"]["files"]["lib.py"]["contexts"]["4"] == ["tests/test_lib.py::test_resume"]


def test_a_run_on_python_3_12_localises_from_sys_monitoring_and_repairs(tmp_path: Path, py312: str) -> None:
    broken = {**PROJECT, "shop.py": PROJECT["shop.py"].replace("sum(self.items) * RATE", "sum(self.items) + RATE")}
    repo = make_repo(tmp_path / "repo", broken, python=py312)
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json"])
    assert code == 0 and summary is not None and summary["status"] == "succeeded", err
    assert "sum(self.items) * RATE" in (repo / "shop.py").read_text()
    recorded = repo / ".explore" / "runs" / summary["run_id"] / "mutate-baseline" / "coverage-run.json"
    assert json.loads(recorded.read_text())["tracer"] == "sys.monitoring"
    assert_no_debris(repo)
