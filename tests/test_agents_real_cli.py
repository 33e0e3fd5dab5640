"""Issue 26's acceptance with the real Claude Code and Codex CLIs: `explore run --agent claude-code`
(or `codex`) as a user runs it, the CLI installed from npm (tests/agent_clis.py), its model a
scripted server on 127.0.0.1 — the Messages API through ANTHROPIC_BASE_URL, the Responses API as a
Codex custom model provider. Claude Code says its working directory in its prompt, so the script
knows which candidate asks."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from agent_clis import OLDER, real_cli
from conftest import assert_no_debris, git, make_repo, run_cli
from explore.generators.agents.scripted import USAGE, ScriptedResponses, apply_patch, message
from explore.generators.anthropic.scripted import Failure, ScriptedAPI, Step, serve

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_ok():\n    assert True\n",
}
ISSUE = "# add is wrong\n\n`add(2, 3)` returns -1; it should return 5.\n"
WRONG = "a * b"


def edit(to: str) -> Any:
    """Claude Code's file tools on calc.py of whichever worktree asks: Read, Edit, then a last word."""

    def steps(cwd: str, turn: int) -> Step:
        return [
            [("Read", {"file_path": f"{cwd}/calc.py"})],
            [("Edit", {"file_path": f"{cwd}/calc.py", "old_string": "a - b", "new_string": to})],
            f"add now returns {to}.",
        ][min(turn, 2)]

    return steps


def script(api: ScriptedAPI, by_candidate: dict[str, Any]) -> None:
    def reply(role: str, turn: int, body: dict[str, Any]) -> Step:
        cwd = api.workdir(body) or ""
        return by_candidate.get(Path(cwd).name, by_candidate["*"])(cwd, turn)

    api.on_reply = reply


def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A TMPDIR of the test's own for the CLIs: claude leaves `claude-0/fswatch-probe-*` folders and
    gemini an error report per refused key in the machine's /tmp, one set per test run."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))


@pytest.fixture
def claude(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[ScriptedAPI, str]]:
    """The scripted model served on loopback, the real `claude`, and a HOME of the test's own. The
    pinned release, or (parametrized "older") one people still have: agent_clis.OLDER, which knows
    no --permission-prompts."""
    package = OLDER["claude"] if getattr(request, "param", "latest") == "older" else None
    yield from served(str(real_cli("claude", package)), tmp_path, monkeypatch)


BOTH_RELEASES = pytest.mark.parametrize("claude", ["latest", "older"], indirect=True)
OLDER_RELEASE = pytest.mark.parametrize("claude", ["older"], indirect=True)


def served(binary: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ScriptedAPI, str]]:
    api = ScriptedAPI()
    with serve(api) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        private_tmp(tmp_path, monkeypatch)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield api, binary
        assert not ours(binary, tmp_path / "home")


def ours(binary: str, home: Path) -> list[psutil.Process]:
    """Live `claude` processes of this test (other test workers run their own)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if binary in " ".join(proc.info["cmdline"] or []) and proc.environ().get("HOME") == str(home):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def repo(tmp_path: Path, binary: str, extra: str = "") -> Path:
    return make_repo(
        tmp_path / "repo", FILES, explore_config=f'\n[tool.explore.agents.claude-code]\nbin = "{binary}"\n{extra}'
    )


def transcript_cost(summary: dict, iteration: int, cid: str) -> float:
    """total_cost_usd of the result line Claude Code printed for that candidate (its transcript)."""
    log = Path(summary["report"]).parent / f"iteration-{iteration}" / f"candidate-{cid}" / "agent.log"
    results = [
        json.loads(line) for line in log.read_text().splitlines() if line.startswith('{"') and '"type":"result"' in line
    ]
    return results[-1]["total_cost_usd"]


@BOTH_RELEASES
def test_two_candidates_the_right_one_merged_with_the_cost_claude_code_reported(
    tmp_path: Path, claude: tuple[ScriptedAPI, str]
) -> None:
    """At the pinned release and at 2.1.197, which knows no --permission-prompts (every candidate
    crashed on it before): explore reads its --help, leaves the flag out, and the run merges the fix."""
    api, binary = claude
    script(api, {"a": edit("a + b"), "*": edit(WRONG)})
    root = repo(tmp_path, binary)
    code, summary, stderr = run_cli(["run", str(root), "--agent", "claude-code", "--parallel", "2", "--json"])
    assert summary is not None and code == 0 and summary["status"] == "succeeded", stderr
    [iteration] = summary["iterations"]
    assert iteration["winner"] == "a" and "return a + b" in (root / "calc.py").read_text()
    a, b = iteration["candidates"]
    assert a["generator"] == b["generator"] == "claude-code" and a["status"] == "ok" and b["pass_rate"] < a["pass_rate"]
    for candidate in (a, b):
        reported = transcript_cost(summary, 1, candidate["id"])
        assert reported > 0 and candidate["usage"]["cost_usd"] == pytest.approx(reported)
        assert candidate["usage"]["calls"] == 3  # Read, Edit, the last word: three model calls
        read = json.loads(
            (Path(summary["report"]).parent / "iteration-1" / f"candidate-{candidate['id']}" / "agent.json").read_text()
        )
        assert read["session_id"] and read["result"].startswith("add now returns")
    assert summary["usage"]["cost_usd"] == pytest.approx(a["usage"]["cost_usd"] + b["usage"]["cost_usd"])
    assert {Path(api.workdir(r["body"]) or "").name for r in api.requests} == {"a", "b"}
    # the transcript of each candidate's agent is in its candidate folder; the report and live view say the cost
    assert f"${summary['usage']['cost_usd']:.4f}" in Path(summary["report"]).read_text()
    assert "usage: iteration 1 $" in stderr
    assert_no_debris(root)


def test_budget_below_one_candidate_stops_before_the_next_claude_run(
    tmp_path: Path, claude: tuple[ScriptedAPI, str]
) -> None:
    api, binary = claude
    script(api, {"*": edit(WRONG)})
    root = repo(tmp_path, binary)
    code, summary, stderr = run_cli(
        [
            "run",
            str(root),
            "--agent",
            "claude-code",
            "--parallel",
            "1",
            "--max-iterations",
            "3",
            "--budget-usd",
            "0.001",
            "--json",
        ]
    )
    assert summary is not None and code == 1 and summary["status"] == "failed", stderr
    assert "budget" in json.dumps(summary).lower()
    assert sum(1 for r in api.requests if ScriptedAPI.turn(r["body"]) == 0) == 1  # one claude run, no second
    assert summary["usage"]["cost_usd"] > 0.001
    assert_no_debris(root)


def test_a_refused_key_escalates_within_seconds_and_leaves_no_claude(
    tmp_path: Path, claude: tuple[ScriptedAPI, str]
) -> None:
    api, binary = claude
    api.failures += [Failure(401) for _ in range(50)]
    root = repo(tmp_path, binary)
    started = time.monotonic()
    code, summary, stderr = run_cli(["run", str(root), "--agent", "claude-code", "--parallel", "2", "--json"])
    elapsed = time.monotonic() - started
    assert summary is not None and code == 3 and summary["status"] == "escalated", stderr
    assert summary["escalation"]["category"] == "external_service"
    assert "claude-code" in summary["escalation"]["reason"] and "401" in summary["escalation"]["reason"]
    assert len(api.requests) <= 2 * 3  # its own retries only (CLAUDE_CODE_MAX_RETRIES=2), never explore's
    assert elapsed < 90, elapsed  # claude's start-up dominates; its retries of a 401 would take minutes
    assert_no_debris(root)


def codex_config(tmp_path: Path, url: str, extra: str = "") -> str:
    """[tool.explore.agents.codex]: the real codex, a custom model provider at url with no retries of its
    own, a CODEX_HOME and TMPDIR of the test's (codex puts no sandbox helper in a home under TMPDIR)."""
    for folder in ("codex-home", "codex-tmp"):
        (tmp_path / folder).mkdir(exist_ok=True)
    provider = (
        f'model_providers.scripted={{name="scripted", base_url="{url}/v1", env_key="ANTHROPIC_API_KEY", '
        f'wire_api="responses", request_max_retries=0, stream_max_retries=0}}'
    )
    return (
        f'\n[tool.explore.agents.codex]\nbin = "{real_cli("codex")}"\nmodel = "gpt-5.5"\n'
        f"args = ['-c', 'model_provider=scripted', '-c', '{provider}']\n"
        f'env = {{CODEX_HOME = "{tmp_path / "codex-home"}", TMPDIR = "{tmp_path / "codex-tmp"}"}}\n{extra}'
    )


def test_codex_edits_in_its_sandbox_and_its_tokens_are_booked(tmp_path: Path, claude: tuple[ScriptedAPI, str]) -> None:
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n"
    model = ScriptedResponses(lambda body, turn: apply_patch(patch) if turn == 0 else message("add adds now"))
    with serve(model) as url:  # type: ignore[arg-type]
        root = make_repo(
            tmp_path / "repo",
            FILES,
            explore_config=codex_config(tmp_path, url, "price = {input = 1.0, cached_input = 0.1, output = 10.0}\n"),
        )
        code, summary, stderr = run_cli(["run", str(root), "--agent", "codex", "--parallel", "1", "--json"])
    assert summary is not None and code == 0 and summary["status"] == "succeeded", stderr
    [candidate] = summary["iterations"][0]["candidates"]
    assert candidate["generator"] == "codex" and "return a + b" in (root / "calc.py").read_text()
    assert len(model.requests) == 2 and "web_search" not in json.dumps(
        [t.get("name") for t in model.requests[0]["tools"]]
    )
    cached = 2 * USAGE["input_tokens_details"]["cached_tokens"]
    fresh, out = 2 * USAGE["input_tokens"] - cached, 2 * USAGE["output_tokens"]  # codex adds up its turn's responses
    assert {
        k: candidate["usage"][k] for k in ("input_tokens", "cache_read_input_tokens", "output_tokens", "calls")
    } == {"input_tokens": fresh, "cache_read_input_tokens": cached, "output_tokens": out, "calls": 1}
    assert candidate["usage"]["cost_usd"] == pytest.approx((fresh * 1.0 + cached * 0.1 + out * 10.0) / 1e6)
    assert_no_debris(root)


def test_chain_codex_rate_limited_then_claude_code_produces_the_iteration(
    tmp_path: Path, claude: tuple[ScriptedAPI, str]
) -> None:
    api, binary = claude
    script(api, {"*": edit("a + b")})
    codex_api = ScriptedAPI(failures=[Failure(429) for _ in range(50)])
    with serve(codex_api) as codex_url:
        root = repo(tmp_path, binary, codex_config(tmp_path, codex_url))
        code, summary, stderr = run_cli(["run", str(root), "--agent", "codex,claude-code", "--parallel", "2", "--json"])
    assert summary is not None and code == 0 and summary["status"] == "succeeded", stderr
    [iteration] = summary["iterations"]
    assert {c["generator"] for c in iteration["candidates"]} == {"claude-code"}
    assert len(iteration["fallbacks"]) == 2 and all(
        "codex unavailable" in why and "429" in why for why in iteration["fallbacks"]
    )
    assert codex_api.requests and all(
        r["path"].endswith("/responses") for r in codex_api.requests
    )  # the real codex asked
    assert "return a + b" in (root / "calc.py").read_text()
    assert_no_debris(root)


def test_issue_reproduced_by_claude_code_then_repaired(tmp_path: Path, claude: tuple[ScriptedAPI, str]) -> None:
    api, binary = claude
    test_file = "from calc import add\n\n\ndef test_add_sums():\n    assert add(2, 3) == 5\n"

    def writer(cwd: str, turn: int) -> Step:
        return [
            [("Write", {"file_path": f"{cwd}/tests/test_issue.py", "content": test_file})],
            'Wrote tests/test_issue.py.\n{"expected_failure": "assert -1 == 5", "summary": "add(2, 3) is 5"}',
        ][min(turn, 1)]

    def reply(role: str, turn: int, body: dict[str, Any]) -> Step:
        cwd = api.workdir(body) or ""
        return writer(cwd, turn) if "role: test-writer" in json.dumps(body) else edit("a + b")(cwd, turn)

    api.on_reply = reply
    files = {"calc.py": FILES["calc.py"], "tests/test_other.py": "def test_ok():\n    assert True\n"}
    root = make_repo(
        tmp_path / "repo", files, explore_config=f'\n[tool.explore.agents.claude-code]\nbin = "{binary}"\n'
    )
    (tmp_path / "issue.md").write_text(ISSUE)
    code, summary, stderr = run_cli(
        ["run", str(root), "--agent", "claude-code", "--parallel", "1", "--issue", str(tmp_path / "issue.md"), "--json"]
    )
    assert summary is not None and code == 0, stderr
    assert (root / "tests" / "test_issue.py").read_text() == test_file and "return a + b" in (
        root / "calc.py"
    ).read_text()
    repro = summary["reproduction"]
    assert repro["kept"] == ["tests/test_issue.py::test_add_sums"] and repro["samples"][0]["generator"] == "claude-code"
    assert git(root, "show", "--name-only", "--format=", repro["commit"]).split() == ["tests/test_issue.py"]
    [first] = summary["iterations"]
    assert first["winner"] == "a" and first["candidates"][0]["files_changed"] == ["calc.py"]
    assert_no_debris(root)


def test_gemini_cli_refused_key_escalates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real Gemini CLI (API-key auth chosen in its settings, GOOGLE_GEMINI_BASE_URL on loopback)
    meets a 401: its JSON error is read, the run escalates at once."""
    gemini = str(real_cli("gemini"))
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})
    )
    api = ScriptedAPI(failures=[Failure(401) for _ in range(20)])
    with serve(api) as url:
        monkeypatch.setenv("HOME", str(home))
        private_tmp(tmp_path, monkeypatch)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)
        monkeypatch.setenv("GEMINI_API_KEY", "not-a-real-key")
        root = make_repo(tmp_path / "repo", FILES, explore_config=f'\n[tool.explore.agents.gemini]\nbin = "{gemini}"\n')
        code, summary, stderr = run_cli(["run", str(root), "--agent", "gemini", "--parallel", "1", "--json"])
    assert summary is not None and code == 3 and summary["escalation"]["category"] == "external_service", stderr
    assert "gemini" in summary["escalation"]["reason"] and "401" in summary["escalation"]["reason"]
    assert api.requests and all("/v1beta/models/" in r["path"] for r in api.requests)  # the real gemini asked
    assert not ours(gemini, home)
    assert_no_debris(root)


def test_qwen_code_refused_key_escalates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real Qwen Code (OpenAI-compatible auth at a loopback base URL, given with `args`) gets the
    task on stdin, meets a 401, and the run escalates from its `result` message."""
    qwen = str(real_cli("qwen"))
    api = ScriptedAPI(failures=[Failure(401) for _ in range(20)])
    (tmp_path / "home").mkdir()
    with serve(api) as url:
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        private_tmp(tmp_path, monkeypatch)
        args = ["--auth-type", "openai", "--openai-base-url", f"{url}/v1", "--openai-api-key", "not-a-real-key"]
        config = (
            f'\n[tool.explore.agents.qwen]\nbin = "{qwen}"\nmodel = "qwen3-coder-plus"\nargs = {json.dumps(args)}\n'
        )
        root = make_repo(tmp_path / "repo", FILES, explore_config=config)
        code, summary, stderr = run_cli(["run", str(root), "--agent", "qwen", "--parallel", "1", "--json"])
    assert summary is not None and code == 3 and summary["escalation"]["category"] == "external_service", stderr
    assert "qwen" in summary["escalation"]["reason"] and "401" in summary["escalation"]["reason"]
    assert api.requests and "Repair the failing tests" in json.dumps(
        api.requests[0]["body"]
    )  # the task arrived on stdin
    assert not ours(qwen, tmp_path / "home")
    assert_no_debris(root)


@OLDER_RELEASE
def test_an_option_the_older_claude_code_refuses_stops_the_run_at_once_with_its_message(
    tmp_path: Path, claude: tuple[ScriptedAPI, str]
) -> None:
    """The flag forced through `args`: every candidate crashes on `unknown option` before any model
    request, and the run stops there (exit 2, the CLI's message) instead of spending its iterations."""
    api, binary = claude
    script(api, {"*": edit("a + b")})
    root = repo(tmp_path, binary, 'args = ["--permission-prompts", "none"]\n')
    code, summary, stderr = run_cli(
        ["run", str(root), "--agent", "claude-code", "--parallel", "2", "--max-iterations", "3", "--json"]
    )
    assert summary is not None and code == 2 and summary["status"] == "error", stderr
    assert "claude-code" in summary["error"] and "unknown option '--permission-prompts'" in summary["error"]
    assert not api.requests
    assert_no_debris(root)


def test_a_fleet_of_claude_code_codex_and_mutate_merges_the_best_candidate(
    tmp_path: Path, claude: tuple[ScriptedAPI, str]
) -> None:
    """Three slots, one candidate each (a: Claude Code, b: Codex, c: mutate): Claude Code's edit is
    wrong, Codex's right; the tests choose, the fix is merged, and `agents` tallies each."""
    api, binary = claude
    script(api, {"*": edit(WRONG)})
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n"
    model = ScriptedResponses(lambda body, turn: apply_patch(patch) if turn == 0 else message("add adds now"))
    with serve(model) as url:  # type: ignore[arg-type]
        root = repo(tmp_path, binary, codex_config(tmp_path, url))
        code, summary, stderr = run_cli(
            [
                "run",
                str(root),
                "--agent",
                "claude-code",
                "--agent",
                "codex",
                "--agent",
                "mutate",
                "--parallel",
                "3",
                "--json",
            ]
        )
    assert summary is not None and code == 0 and summary["status"] == "succeeded", stderr
    [iteration] = summary["iterations"]
    by_id = {c["id"]: c for c in iteration["candidates"]}
    assert [by_id[i]["generator"] for i in "abc"] == ["claude-code", "codex", "mutate"]
    assert by_id["a"]["pass_rate"] < 100 and by_id["b"]["status"] == "ok"
    assert (
        by_id[iteration["winner"]]["generator"] in ("codex", "mutate")
        and "return a + b" in (root / "calc.py").read_text()
    )
    assert set(summary["agents"]) == {"claude-code", "codex", "mutate"}
    assert sum(a["wins"] for a in summary["agents"].values()) == 1 and summary["agents"]["claude-code"]["cost_usd"] > 0
    assert model.requests and api.requests  # both real CLIs asked their model
    assert_no_debris(root)
