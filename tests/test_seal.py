"""The per-run seal on pytest's JSON report: real pytest runs; a forged or edited report is not believed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import write_files
from explore.edges import seal
from explore.edges.testing import make_command, run_tests

SUITE = {
    "test_x.py": """\
        import os


        def test_key_is_out_of_reach():
            assert "EXPLORE_REPORT_SEAL" not in os.environ


        def test_fails():
            assert 1 == 2
        """,
}


@pytest.mark.anyio
async def test_a_real_run_is_sealed_and_believed(tmp_path: Path) -> None:
    write_files(tmp_path / "w", SUITE)
    run = await run_tests(make_command(None, None, sys.executable), tmp_path / "w", tmp_path / "logs" / "t.log")
    assert run.infra_error is None
    assert {i: o.outcome for i, o in run.outcomes.items()} == {
        "test_x.py::test_key_is_out_of_reach": "passed",
        "test_x.py::test_fails": "failed",
    }
    assert seal.FIELD in json.loads((tmp_path / "logs" / "t.report").read_text())


@pytest.mark.anyio
async def test_a_report_forged_by_the_code_under_test_is_not_believed(tmp_path: Path) -> None:
    forge = """\
        import json, os, sys
        path = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--json-report-file="))
        json.dump({"tests": [{"nodeid": "test_x.py::test_fails", "outcome": "passed"}], "explore_seal": "0" * 64}, open(path, "w"))
        os._exit(0)
        """
    write_files(tmp_path / "w", {**SUITE, "conftest.py": forge})
    run = await run_tests(make_command(None, None, sys.executable), tmp_path / "w", tmp_path / "logs" / "t.log")
    assert run.outcomes == {} and "forged" in (run.infra_error or "")


def test_an_edited_report_fails_verification(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(seal.ENV, seal.env("k1", tmp_path / "keys")[seal.ENV])
    namespace: dict = {"__name__": seal.PLUGIN}
    exec(seal.PLUGIN_SOURCE, namespace)  # the plugin as pytest loads it

    class Manager:
        def register(self, plugin: object, name: str) -> None:
            self.signer = plugin

    manager = Manager()
    namespace["pytest_plugin_registered"](type("M", (), {"__name__": seal.PLUGIN})(), manager)
    assert seal.ENV not in os.environ and list((tmp_path / "keys").iterdir()) == []  # the key file is gone
    assert not [v for v in namespace.values() if isinstance(v, (str, bytes)) and "k1" in str(v)]
    report = {"tests": [{"nodeid": "t::a", "outcome": "failed"}], "collectors": []}
    manager.signer.pytest_json_modifyreport(report)  # type: ignore[attr-defined]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    assert seal.verify(path, "k1") and not seal.verify(path, "k2")
    report["tests"][0]["outcome"] = "passed"
    path.write_text(json.dumps(report))
    assert not seal.verify(path, "k1")
    path.write_text("not json")
    assert not seal.verify(path, "k1")
