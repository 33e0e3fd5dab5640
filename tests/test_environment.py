"""Environment failures (issue 27 point 2, issue 30 point 6): failures no code edit can fix are
named at the baseline with the line that shows why and left out of the targets; never an
AssertionError or an error the project's own code raises. Real pytest runs give the tracebacks."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from conftest import assert_no_debris, make_repo, run_cli
from explore.decide import environment
from explore.edges.testing import TestCommand, run_tests

CALC = {
    "calc.py": "def half(x):\n    return x * 2\n\n\ndef double(x):\n    return x + x\n",
    "tests/test_calc.py": "from calc import double, half\n\n\ndef test_half():\n    assert half(8) == 4\n\n\ndef test_double():\n    assert double(3) == 6\n",
}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the probe is: a refused connection


def kinds_by_test(tmp_path: Path) -> dict[str, str | None]:
    port = _closed_port()
    repo = make_repo(
        tmp_path / "repo",
        {
            **CALC,
            "shop/__init__.py": "",
            "shop/client.py": "def fetch():\n    raise RuntimeError('connection refused by the shop')\n",
            "tests/test_env.py": f"""\
            import importlib.metadata
            import os
            import socket

            from shop.client import fetch


            def test_metadata():
                assert importlib.metadata.version("explore-surely-not-installed-dist")


            def test_missing_module():
                import surely_not_installed_module  # noqa: F401


            def test_own_missing_module():
                import shop.gone  # noqa: F401


            def test_env_variable():
                assert os.environ["EXPLORE_SURELY_UNSET_TOKEN"]


            def test_refused():
                socket.create_connection(("127.0.0.1", {port}), timeout=5)


            def test_dns():
                socket.getaddrinfo("no-such-host.invalid", 80)


            def test_assertion_naming_a_refusal():
                assert "Connection refused" == "ok"


            def test_project_raises():
                fetch()
            """,
        },
    )
    run = await_run(repo, tmp_path)
    files = ["calc.py", "shop/__init__.py", "shop/client.py", "tests/test_calc.py", "tests/test_env.py"]
    modules = environment.local_modules(files)
    out = {}
    for test_id in run.failing():
        found = environment.classify(run.outcomes[test_id], modules, files)
        out[test_id.split("::")[1]] = found.kind if found else None
        if found:
            assert found.evidence and found.evidence in (
                run.outcomes[test_id].longrepr or run.outcomes[test_id].message
            )
    return out


def await_run(repo: Path, tmp_path: Path):
    import anyio

    return anyio.run(run_tests, TestCommand(python=sys.executable, test_timeout=30.0), repo, tmp_path / "run.log")


def test_environment_failures_are_told_from_code_failures(tmp_path: Path) -> None:
    assert kinds_by_test(tmp_path) == {
        "test_half": None,  # an AssertionError: the bug
        "test_metadata": "missing_metadata",
        "test_missing_module": "missing_module",
        "test_own_missing_module": None,  # the repository's own package: an import the code can fix
        "test_env_variable": "missing_env",
        "test_refused": "connection_refused",
        "test_dns": "dns",
        "test_assertion_naming_a_refusal": None,
        "test_project_raises": None,  # raised by the project's code, whatever its message says
    }


def test_network_kinds_stay_targets() -> None:
    from explore.model.testresults import EnvironmentFailure

    found = [
        EnvironmentFailure(test="t::dns", kind="dns", evidence="x"),
        EnvironmentFailure(test="t::meta", kind="missing_metadata", evidence="y"),
    ]
    assert [f.test for f in environment.left_out(found, None)] == ["t::meta"]
    assert [f.test for f in environment.left_out(found, ["t::dns"])] == ["t::meta"]
    assert [f.test for f in environment.left_out(found, ["t::other"])] == ["t::dns", "t::meta"]


def test_missing_metadata_is_left_out_and_the_bug_repaired_in_one_iteration(tmp_path: Path) -> None:
    """Issue 27's acceptance: one iteration, the failure named `environment`, no mutant screened
    against it (mutate is told of one failing test only)."""
    repo = make_repo(
        tmp_path / "repo",
        {
            **CALC,
            "tests/test_version.py": (
                "import importlib.metadata\n\n\ndef test_version():\n    assert importlib.metadata.version('calc-not-installed')\n"
            ),
        },
    )
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json"])
    assert code == 0, err
    assert summary is not None and len(summary["iterations"]) == 1
    assert [(f["test"], f["kind"]) for f in summary["environment_failures"]] == [
        ("tests/test_version.py::test_version", "missing_metadata")
    ]
    assert "calc-not-installed" in summary["environment_failures"][0]["evidence"]
    assert "environment: 1 failure(s) no code edit can fix" in err and "PackageNotFoundError" in err
    assert summary["iterations"][0]["failed_tests"] == ["tests/test_version.py::test_version"]
    assert "1 failing test" in summary["iterations"][0]["generator_note"]  # the bug's test alone was aimed at
    assert "## Environment failures (1" in Path(summary["report"]).read_text()
    assert "x * 2" not in (repo / "calc.py").read_text()
    assert_no_debris(repo)


NETWORK = {
    **CALC,
    "tests/test_net.py": "import socket\n\n\ndef test_fetch():\n    socket.getaddrinfo('no-such-host.invalid', 80)\n",
}


@pytest.mark.parametrize("target_the_network_test", [False, True], ids=["bug-targeted", "network-targeted"])
def test_a_network_failure_outside_the_targets_is_environment(tmp_path: Path, target_the_network_test: bool) -> None:
    """Issue 30's acceptance: targets given, a non-target test failing on an unresolvable host at
    the baseline: the targets are repaired, exit 0, the network failure named; with that test as
    a target the run escalates `external_service` as before, counting only the tests that need it."""
    repo = make_repo(tmp_path / "repo", NETWORK)
    ids = ["tests/test_calc.py::test_half"] + (["tests/test_net.py::test_fetch"] if target_the_network_test else [])
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json", "--", *ids])
    assert summary is not None, err
    if target_the_network_test:
        assert code == 3 and summary["escalation"]["category"] == "external_service"
        assert "in 1 failing test(s), e.g. tests/test_net.py::test_fetch" in summary["escalation"]["reason"]
    else:
        assert code == 0, err
        assert [(f["test"], f["kind"]) for f in summary["environment_failures"]] == [
            ("tests/test_net.py::test_fetch", "dns")
        ]
        assert "x * 2" not in (repo / "calc.py").read_text()
    assert_no_debris(repo)
