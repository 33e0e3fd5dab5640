"""Environment failures (issue 27 point 2, issue 30 point 6): failures no code edit can fix are
named at the baseline with the line that shows why and left out of the targets; never an
AssertionError or an error the project's own code raises. Real pytest runs give the tracebacks."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from conftest import assert_no_debris, git, make_repo, run_cli
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


def test_environment_failures_leave_the_repair_unless_nothing_else_is_left() -> None:
    """Issue 39 point 1: named targets or not, every environment failure leaves the repair while
    another failure is left to repair; the service kinds among the tests to repair are remembered
    (the run ends external_service for them). When only they are left, they stay: escalate at once."""
    from explore.model.testresults import EnvironmentFailure

    dns = EnvironmentFailure(test="t::dns", kind="dns", evidence="x")
    meta = EnvironmentFailure(test="t::meta", kind="missing_metadata", evidence="y")
    token = EnvironmentFailure(test="t::token", kind="missing_env", evidence="z")
    failing = ["t::bug", "t::dns", "t::meta", "t::token"]
    aside = environment.set_aside([dns, meta, token], failing, None)
    assert [f.test for f in aside.left_out] == ["t::dns", "t::meta", "t::token"] and aside.kept == []
    assert aside.awaiting_service == ["t::dns", "t::token"]
    named = environment.set_aside([dns, meta], failing, ["t::bug", "t::dns"])  # a named target needing a service
    assert [f.test for f in named.left_out] == ["t::dns", "t::meta"] and named.awaiting_service == ["t::dns"]
    outside = environment.set_aside([dns, meta], failing, ["t::bug"])  # not a target: left alone, no exit 3
    assert [f.test for f in outside.left_out] == ["t::dns", "t::meta"] and outside.awaiting_service == []
    alone = environment.set_aside([dns, meta], ["t::dns", "t::meta"], None)  # nothing else to repair
    assert [f.test for f in alone.left_out] == ["t::meta"] and alone.awaiting_service == [] and alone.kept == [dns]
    assert "could not be resolved" in environment.service_reason(alone.kept)
    reason = environment.awaiting_reason([dns, meta, token], ["t::dns", "t::token"])
    assert "could not be resolved" in reason and "credential" in reason and "t::dns, t::token" in reason


@pytest.mark.parametrize(
    "line",
    ["OSError: [Errno 101] Network is unreachable", "OSError: [Errno 113] No route to host"],
)
def test_an_unreachable_network_is_environment(line: str) -> None:
    from explore.model.testresults import TestOutcome

    outcome = TestOutcome(
        id="t::net",
        outcome="failed",
        message=line,
        longrepr=f"    def test_net():\n>       connect()\nE       {line}\n",
    )
    found = environment.classify(outcome, frozenset(), [])
    assert found is not None and found.kind == "unreachable" and found.evidence == line


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


BESIDE_A_BUG = {
    **NETWORK,
    "shop/__init__.py": "",
    "shop/remote.py": (
        "import urllib.request\n\n\ndef status(url):\n"
        "    with urllib.request.urlopen(url, timeout=10) as reply:\n        return reply.status\n"
    ),
    "tests/test_remote.py": (
        "from shop.remote import status\n\n\ndef test_status():\n    assert status('http://nonexistent.invalid/') == 200\n"
    ),
}
NET_TESTS = ["tests/test_net.py::test_fetch", "tests/test_remote.py::test_status"]


@pytest.mark.parametrize("targets", ["none", "bug", "bug-and-network"])
def test_network_failures_beside_a_real_bug_are_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, targets: str
) -> None:
    """Issue 39 point 1 (issue 30 before it): two tests failing on an unresolvable host (one through
    the package's own urllib call) beside a real bug. Named targets or not, they leave the repair and
    the bug is repaired; when they were tests to repair (no targets, or named) the run ends
    external_service (exit 3) naming them, the repair merged on the run's ref (the user's branch
    unmoved: exit 3 is below the gate); outside the named targets they are left alone and the run
    succeeds."""
    for proxy in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)  # the host must be looked up here, not by a proxy
    repo = make_repo(tmp_path / "repo", BESIDE_A_BUG)
    ids = {
        "none": [],
        "bug": ["--", "tests/test_calc.py::test_half"],
        "bug-and-network": ["--", "tests/test_calc.py::test_half", *NET_TESTS],
    }[targets]
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json", *ids])
    assert summary is not None, err
    assert [(f["test"], f["kind"]) for f in summary["environment_failures"]] == [(t, "dns") for t in NET_TESTS]
    assert summary["iterations"] and summary["iterations"][0]["winner"], err  # the bug was repaired
    assert "1 failing test" in summary["iterations"][0]["generator_note"]  # the bug's test alone was aimed at
    if targets == "bug":
        assert code == 0 and summary["applied"], err
        assert "x * 2" not in (repo / "calc.py").read_text()
    else:
        assert code == 3 and summary["status"] == "escalated", err
        escalation = summary["escalation"]
        assert escalation["category"] == "external_service"
        assert "could not be resolved" in escalation["reason"] and "in 2 failing test(s)" in escalation["reason"]
        assert all(t in escalation["reason"] for t in NET_TESTS)
        assert summary["merged_commit"] and not summary["applied"]
        assert "x * 2" in (repo / "calc.py").read_text()  # exit 3 is below the gate: the user's tree as it was
        assert f"explore apply {summary['run_id']}" in err and "HELP NEEDED (external_service)" in err
        report = Path(summary["report"]).read_text()
        assert "## Environment failures (2" in report and all(t in report for t in NET_TESTS)
        assert "escalated: 2/4 passed (50.0%)" in err  # the repair's real counts
    assert_no_debris(repo)


def test_a_network_failure_alone_escalates_at_once_with_the_baseline_counts(tmp_path: Path) -> None:
    """Issue 39 points 1 and 8: every failure needs the network: nothing to repair, the run escalates
    at the baseline — and its last line gives the baseline's counts, never 0/0."""
    repo = make_repo(tmp_path / "repo", {**NETWORK, "calc.py": CALC["calc.py"].replace("x * 2", "x / 2")})
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json"])
    assert code == 3 and summary is not None and summary["escalation"]["category"] == "external_service", err
    assert "in 1 failing test(s), e.g. tests/test_net.py::test_fetch" in summary["escalation"]["reason"]
    assert summary["iterations"] == []
    assert summary["baseline"] == summary["final"] == {"passed": 2, "failed": 1, "total": 3, "pass_rate": 66.6667}
    assert "escalated: 2/3 passed (66.7%)" in err and "0/0 passed" not in err
    assert "baseline: 2/3 passed (66.7%)" in err  # the line log (and the live view's header) too
    assert_no_debris(repo)


def test_once_the_service_is_back_resume_finishes_the_run_and_moves_the_branch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39 point 1: a test refused by a service on loopback beside a real bug: the bug is
    repaired and the run ends external_service, the branch unmoved; once the service listens,
    `explore resume` re-tests, the gate is met and the branch moves to the repair."""
    monkeypatch.setenv("EXPLORE_SANDBOX", "off")  # the service listens on this machine's loopback
    port = _closed_port()
    service = f"import socket\n\n\ndef test_service():\n    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
    repo = make_repo(tmp_path / "repo", {**CALC, "tests/test_service.py": service})
    start = git(repo, "rev-parse", "HEAD")
    code, summary, err = run_cli(["run", str(repo), "--agent", "mutate", "--json"])
    assert code == 3 and summary is not None and summary["escalation"]["category"] == "external_service", err
    assert "tests/test_service.py::test_service" in summary["escalation"]["reason"] and summary["merged_commit"]
    assert git(repo, "rev-parse", "HEAD") == start
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", port))
        listening.listen(8)
        code, resumed, err = run_cli(["resume", summary["run_id"], "--json"], cwd=repo)
    assert code == 0 and resumed is not None and resumed["status"] == "succeeded", err
    assert resumed["applied"] is True and git(repo, "rev-parse", "HEAD") == summary["merged_commit"]
    assert "x * 2" not in (repo / "calc.py").read_text()
    assert_no_debris(repo)
