"""Issue 4's acceptance: `explore run --agent anthropic` as a user runs it (a real process),
the real SDK, and a scripted Messages API served on 127.0.0.1 through ANTHROPIC_BASE_URL —
the same seam gateways and proxies use, so nothing in explore is patched."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import assert_no_debris, make_repo, run_cli
from explore.generators.anthropic.cost import DEFAULT_PRICES, cost_of
from explore.generators.anthropic.scripted import Failure, ScriptedAPI, serve

KEY = "sk-ant-e2e-0123456789abcdef-SECRET"
FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
    # test_add prints the key (as a test dumping its environment would): no file of the run may hold it
    "tests/test_calc.py": "import os\n\nfrom calc import add, mul\n\n\n"
    "def test_add():\n    print(os.environ.get('ANTHROPIC_API_KEY'))\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n\n\ndef test_ok():\n    assert True\n",
}
DIAGNOSIS = {
    "failure_classification": "test_failure",
    "root_cause": "add subtracts",
    "root_cause_location": {"file": "calc.py", "line": 2, "context": "return a - b"},
    "fix": {
        "description": "use +",
        "changes": [{"file": "calc.py", "line": 2, "current": "a - b", "should_be": "a + b"}],
    },
    "confidence": {"level": "high", "reason": "test_add expects a sum"},
}
DEBUGGER = [[("list_files", {"path": "."})], [("submit_diagnosis", DIAGNOSIS)]]
CODER = [
    [
        ("write_file", {"path": "../outside.py", "content": "pwned"}),
        ("write_file", {"path": "/etc/hosts", "content": "pwned"}),
    ],
    [("read_file", {"path": "calc.py"})],
    [("replace_in_file", {"path": "calc.py", "old": "return a - b", "new": "return a + b"})],
    [("finish", {"summary": "add adds", "confidence": 0.9})],
]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedAPI]:
    scripted = ScriptedAPI(debugger=list(DEBUGGER), coder=list(CODER))
    with serve(scripted) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield scripted


def explore(root: Path, *extra: str) -> tuple[int, dict, str]:
    code, summary, stderr = run_cli(["run", str(root), "--agent", "anthropic", "--parallel", "3", "--json", *extra])
    assert summary is not None, stderr
    return code, summary, stderr


def expected_cost(api: ScriptedAPI) -> float:
    return sum(cost_of(model, usage, DEFAULT_PRICES) for model, usage in api.served)


def assert_key_absent(root: Path) -> None:
    for path in (root / ".explore").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_parallel_run_diagnoses_edits_three_worktrees_and_merges(tmp_path: Path, api: ScriptedAPI) -> None:
    files = {**FILES, "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"}
    root = make_repo(tmp_path / "repo", files)
    code, summary, stderr = explore(root, "--max-iterations", "1")
    assert code == 0 and summary["status"] == "succeeded", stderr
    [iteration] = summary["iterations"]
    assert len(iteration["candidates"]) == 3 and iteration["winner"]
    assert all(c["status"] == "ok" and c["files_changed"] == ["calc.py"] for c in iteration["candidates"])
    assert summary["merged_commit"] and "return a + b" in (root / "calc.py").read_text()
    # usage and cost are exactly the scripted token counts, priced from the table
    usage = summary["usage"]
    assert usage["calls"] == len(api.served) == 2 + 3 * 4
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        assert usage[key] == sum(u[key] for _, u in api.served)
    assert usage["cost_usd"] == pytest.approx(expected_cost(api), abs=1e-5)
    assert usage["cache_read_input_tokens"] > 0  # the coders shared the cached context
    # per iteration and per candidate too, in the summary, the report and the progress display
    assert iteration["usage"] == {k: pytest.approx(v) for k, v in usage.items()}
    assert [c["usage"]["calls"] for c in iteration["candidates"]] == [4, 4, 4]
    report = Path(summary["report"]).read_text()
    assert f"**Usage:** ${usage['cost_usd']:.4f}, 14 calls" in report and f"Usage: ${usage['cost_usd']:.4f}" in report
    assert "a $" in report.split("candidates:")[1]
    assert f"usage: iteration 1 ${usage['cost_usd']:.4f}, 14 calls" in stderr and "[a] ok 100.0%" in stderr
    # the coder asked for ../outside.py and /etc/hosts: refused, nothing written, the candidate went on
    assert not (tmp_path / "outside.py").exists() and "pwned" not in Path("/etc/hosts").read_text()
    assert_key_absent(root)
    assert not [r for r in api.requests if KEY in json.dumps(r["body"])]  # test_add printed it; prompts are redacted
    assert_no_debris(root)


def test_429_is_retried_after_the_stated_delay(tmp_path: Path, api: ScriptedAPI) -> None:
    api.failures.append(Failure(429, {"retry-after": "0.3"}))
    root = make_repo(tmp_path / "repo", {**FILES, "calc.py": FILES["calc.py"].replace("a + b\n", "a * b\n")})
    code, summary, stderr = explore(root)
    assert code == 0 and len(summary["iterations"]) == 1, stderr
    assert [r["model"] for r in api.requests[:2]] == ["claude-opus-5-5", "claude-opus-5-5"]


def test_529_twice_falls_back_to_the_next_model(tmp_path: Path, api: ScriptedAPI) -> None:
    api.failures += [Failure(529, {"retry-after": "0.01"}), Failure(529, {"retry-after": "0.01"})]
    root = make_repo(tmp_path / "repo", {**FILES, "calc.py": FILES["calc.py"].replace("a + b\n", "a * b\n")})
    code, summary, stderr = explore(root)
    assert code == 0, stderr
    assert [r["model"] for r in api.requests[:3]] == ["claude-opus-5-5", "claude-opus-5-5", "claude-sonnet-5-5"]


def test_malformed_diagnosis_is_reasked_then_falls_back(tmp_path: Path, api: ScriptedAPI) -> None:
    bad = {"failure_classification": "gremlins"}
    api.debugger[:] = [[("submit_diagnosis", bad)], [("submit_diagnosis", bad)], [("submit_diagnosis", DIAGNOSIS)]]
    root = make_repo(tmp_path / "repo", {**FILES, "calc.py": FILES["calc.py"].replace("a + b\n", "a * b\n")})
    code, summary, stderr = explore(root)
    assert code == 0, stderr
    assert [r["model"] for r in api.requests[:3]] == ["claude-opus-5-5", "claude-opus-5-5", "claude-sonnet-5-5"]


def test_401_escalates_external_service_without_retry(tmp_path: Path, api: ScriptedAPI) -> None:
    api.failures.append(Failure(401))
    root = make_repo(tmp_path / "repo", FILES)
    code, summary, stderr = explore(root)
    assert code == 3 and summary["status"] == "escalated"
    assert summary["escalation"]["category"] == "external_service" and summary["iterations"] == []
    assert len(api.requests) == 1
    assert KEY not in stderr + json.dumps(summary)
    assert_key_absent(root)
    assert_no_debris(root)


def test_budget_just_above_one_iteration_stops_before_the_second(tmp_path: Path, api: ScriptedAPI) -> None:
    first = make_repo(tmp_path / "a" / "repo", FILES)
    code, summary, _ = explore(first, "--max-iterations", "1")
    one_iteration = summary["usage"]["cost_usd"]
    assert code == 1 and one_iteration > 0
    served = len(api.served)
    api.forget_cache()  # the same iteration again, priced the same (a real cache lasts 5 minutes)
    second = make_repo(tmp_path / "b" / "repo", FILES)
    # 10% above: less than the first call of a second iteration (a fresh context written to the cache)
    code, summary, stderr = explore(second, "--budget-usd", f"{one_iteration * 1.1:.6f}")
    assert code == 1 and summary["status"] == "failed", stderr
    assert len(summary["iterations"]) == 1 and "budget" in summary["stop_reason"]
    assert len(api.served) == 2 * served  # no call of the second iteration was made
    assert summary["usage"]["cost_usd"] <= one_iteration * 1.1
    assert_key_absent(second)


def test_prices_from_the_repository_config_price_the_run(tmp_path: Path, api: ScriptedAPI) -> None:
    prices = {
        "claude-opus-5-5": {"input": 100.0, "output": 200.0, "cache_write": 300.0, "cache_read": 1.0},
        "claude-sonnet-5-5": {"input": 10.0, "output": 20.0, "cache_write": 30.0, "cache_read": 0.5},
    }
    table = "\n".join(
        f'"{m}" = {{ input = {p["input"]}, output = {p["output"]}, cache_write = {p["cache_write"]}, '
        f"cache_read = {p['cache_read']} }}"
        for m, p in prices.items()
    )
    files = {
        **FILES,
        "calc.py": FILES["calc.py"].replace("a + b\n", "a * b\n"),
        "pyproject.toml": f"[tool.explore.anthropic.prices]\n{table}\n",
    }
    root = make_repo(tmp_path / "repo", files)
    code, summary, stderr = explore(root)
    assert code == 0, stderr
    expected = sum(cost_of(model, usage, prices) for model, usage in api.served)
    assert summary["usage"]["cost_usd"] == pytest.approx(expected, abs=1e-5)
    assert expected > 5 * expected_cost(api)  # the configured table, not the built-in one


def test_interrupted_mid_conversation_the_run_keeps_what_its_coders_spent(tmp_path: Path, api: ScriptedAPI) -> None:
    """Ctrl-C while the three coders wait for their second reply: the calls they completed are in
    the saved usage (a resumed run's budget counts them), not only the debugger's."""
    waiting = threading.Semaphore(0)
    release = threading.Event()

    def hold_second_coder_turn(role: str, turn: int, body: dict) -> None:
        if role == "coder" and turn == 1:
            waiting.release()
            release.wait(60)
        return None

    api.on_reply = hold_second_coder_turn
    root = make_repo(tmp_path / "repo", FILES)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "explore", "run", str(root), "--agent", "anthropic", "--parallel", "3", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3):
            assert waiting.acquire(timeout=60), "the coders never reached their second turn"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        served = list(api.served)
    finally:
        release.set()
    assert proc.returncode == 130, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert len(served) == 2 + 3  # the debugger's two calls and each coder's first
    assert summary["usage"]["calls"] == 5 and summary["usage"]["cost_usd"] == pytest.approx(
        expected_cost(api), abs=1e-5
    )
    assert_no_debris(root)
