"""Named agents against stand-in executables that print each CLI's documented output (Codex's
`--json` events, Gemini CLI's and Qwen Code's `--output-format json`, Aider's report lines), run
by `explore run` as a user runs it; the adapters' parsing and failure classes; named command
agents; a missing executable; a hang. Claude Code and Codex for real: test_agents_real_cli.py."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from conftest import assert_no_debris, make_repo, run_cli
from explore.generators.agents import ADAPTERS
from explore.generators.agents.base import AgentSettings, Outcome, classify

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_ok():\n    assert True\n",
}
CODEX = "\n".join(
    json.dumps(e)
    for e in [
        {"type": "thread.started", "thread_id": "th-1"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "add adds now"}},
        {"type": "turn.completed", "usage": {"input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 300}},
    ]
)
GEMINI = "Loaded cached credentials.\n" + json.dumps(
    {
        "session_id": "g-1",
        "response": "add adds now",
        "stats": {
            "models": {
                "gemini-2.5-pro": {
                    "api": {"totalRequests": 2, "totalErrors": 0},
                    "tokens": {
                        "prompt": 1200,
                        "candidates": 250,
                        "total": 1700,
                        "cached": 200,
                        "thoughts": 50,
                        "tool": 0,
                    },
                }
            }
        },
    },
    indent=2,
)
QWEN = json.dumps(
    [
        {"type": "system", "subtype": "init", "session_id": "q-1"},
        {
            "type": "result",
            "subtype": "success",
            "session_id": "q-1",
            "is_error": False,
            "num_turns": 2,
            "result": "add adds now",
            "usage": {"input_tokens": 1000, "output_tokens": 300, "cache_read_input_tokens": 200},
        },
    ]
)
AIDER = (
    "Aider v0.86.1\nTokens: 1.2k sent, 300 received. Cost: $0.01 message, $0.01 session.\nApplied edit to calc.py\n"
    "Tokens: 2.0k sent, 1.0k cache write, 500 cache hit, 150 received. Cost: $0.02 message, $0.03 session.\n"
)
# agent → (flags it must be given, its output, the usage explore must book, price setting)
CASES = {
    "codex": (
        ["exec", "--json", "--sandbox", "workspace-write"],
        CODEX,
        {"input_tokens": 1000, "cache_read_input_tokens": 200, "output_tokens": 300, "calls": 1},
        "{input = 1.0, cached_input = 0.1, output = 10.0}",
    ),
    "gemini": (
        ["--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust"],
        GEMINI,
        {"input_tokens": 1000, "cache_read_input_tokens": 200, "output_tokens": 300, "calls": 2},
        "{input = 1.0, cached_input = 0.1, output = 10.0}",
    ),
    "qwen": (
        ["--output-format", "json", "--approval-mode", "auto-edit"],
        QWEN,
        {"input_tokens": 1000, "cache_read_input_tokens": 200, "output_tokens": 300, "calls": 2},
        "{input = 1.0, cached_input = 0.1, output = 10.0}",
    ),
    "aider": (
        ["--yes-always", "--no-auto-commits", "--message-file"],
        AIDER,
        {
            "input_tokens": 2200,
            "cache_creation_input_tokens": 1000,
            "cache_read_input_tokens": 500,
            "output_tokens": 450,
            "calls": 2,
        },
        None,
    ),
}
COSTS = {
    "codex": (1000 * 1.0 + 200 * 0.1 + 300 * 10.0) / 1e6,
    "gemini": (1000 * 1.0 + 200 * 0.1 + 300 * 10.0) / 1e6,
    "qwen": (1000 * 1.0 + 200 * 0.1 + 300 * 10.0) / 1e6,
    "aider": 0.03,
}


def stand_in(bin_dir: Path, name: str, flags: list[str], output: str, edit: bool = True, exit_code: int = 0) -> Path:
    """An executable named like the CLI: checks the flags explore gives it, reads the prompt (stdin,
    or aider's --message-file), fixes calc.py in its working directory, prints the CLI's output."""
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text(
        textwrap.dedent(f"""\
        #!{sys.executable}
        import pathlib, sys
        args = sys.argv[1:]
        missing = [f for f in {flags!r} if f not in args]
        if missing:
            sys.exit(f"stand-in {name}: explore did not pass {{missing}} (got {{args}})")
        prompt = pathlib.Path(args[args.index("--message-file") + 1]).read_text() if "--message-file" in args else sys.stdin.read()
        if "Repair the failing tests" not in prompt:
            sys.exit("stand-in {name}: no task in the prompt")
        if {edit!r}:
            calc = pathlib.Path("calc.py")
            calc.write_text(calc.read_text().replace("a - b", "a + b"))
        sys.stdout.write({output!r} + "\\n")
        sys.exit({exit_code})
        """)
    )
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_named_agent_repairs_and_books_what_its_cli_reported(tmp_path: Path, name: str) -> None:
    flags, output, usage, price = CASES[name]
    binary = stand_in(tmp_path / "bin", name, flags, output)
    config = f'\n[tool.explore.agents.{name}]\nbin = "{binary}"\n' + (f"price = {price}\n" if price else "")
    root = make_repo(tmp_path / "repo", FILES, explore_config=config)
    code, summary, stderr = run_cli(["run", str(root), "--agent", name, "--parallel", "1", "--json"])
    assert summary is not None and code == 0 and summary["status"] == "succeeded", stderr
    [candidate] = summary["iterations"][0]["candidates"]
    assert candidate["generator"] == name and "return a + b" in (root / "calc.py").read_text()
    assert {k: candidate["usage"].get(k, 0) for k in usage} == usage
    assert candidate["usage"]["cost_usd"] == pytest.approx(COSTS[name]) and summary["usage"][
        "cost_usd"
    ] == pytest.approx(COSTS[name])
    assert (
        output.splitlines()[-1]
        in (Path(summary["report"]).parent / "iteration-1" / "candidate-a" / "agent.log").read_text()
    )
    assert_no_debris(root)


def test_a_missing_executable_is_exit_2_naming_the_install_command(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo", FILES, explore_config='\n[tool.explore.agents.gemini]\nbin = "no-such-gemini"\n'
    )
    code, summary, _ = run_cli(
        ["run", str(root), "--agent", "claude-code,gemini", "--json"],
    )
    assert code == 2 and summary is not None and summary["status"] == "error"
    assert (
        "npm install -g @anthropic-ai/claude-code" in summary["error"]
        or "npm install -g @google/gemini-cli" in summary["error"]
    )
    assert not (root / ".explore" / "runs").exists() or not any((root / ".explore" / "runs").iterdir())


def test_named_command_agents_in_a_chain_each_with_its_own_command(tmp_path: Path) -> None:
    """`[tool.explore.agents.NAME] cmd` defines agents usable in a chain, each with its own command."""
    config = (
        '\n[tool.explore.agents.idle]\ncmd = "true"\n'
        "[tool.explore.agents.fixer]\ncmd = \"sed -i 's/a - b/a + b/' calc.py\"\n"
    )
    root = make_repo(tmp_path / "repo", FILES, explore_config=config)
    code, summary, stderr = run_cli(["run", str(root), "--agent", "fixer,idle,mutate", "--parallel", "1", "--json"])
    assert summary is not None and code == 0, stderr
    assert summary["iterations"][0]["candidates"][0]["generator"] == "fixer"
    assert "return a + b" in (root / "calc.py").read_text()


def test_a_rate_limited_stand_in_falls_back_to_the_next_member(tmp_path: Path) -> None:
    error = json.dumps(
        {
            "session_id": "g-2",
            "error": {"type": "Error", "message": "[API Error: 429 Too Many Requests] quota exceeded", "code": 1},
        }
    )
    binary = stand_in(tmp_path / "bin", "gemini", [], error, edit=False, exit_code=1)
    config = (
        f'\n[tool.explore.agents.gemini]\nbin = "{binary}"\n'
        "[tool.explore.agents.fixer]\ncmd = \"sed -i 's/a - b/a + b/' calc.py\"\n"
    )
    root = make_repo(tmp_path / "repo", FILES, explore_config=config)
    code, summary, stderr = run_cli(["run", str(root), "--agent", "gemini,fixer", "--parallel", "2", "--json"])
    assert summary is not None and code == 0, stderr
    iteration = summary["iterations"][0]
    assert {c["generator"] for c in iteration["candidates"]} == {"fixer"}
    assert len(iteration["fallbacks"]) == 2 and all(
        "gemini unavailable" in why and "429" in why for why in iteration["fallbacks"]
    )


def test_an_agent_hanging_on_a_prompt_is_killed_at_the_branch_timeout_with_its_last_words(tmp_path: Path) -> None:
    hang = tmp_path / "bin" / "qwen"
    hang.parent.mkdir()
    hang.write_text(
        f"#!{sys.executable}\nimport sys, time\nif sys.argv[1:] in (['--version'], ['--help']):\n    sys.exit(1)\n"
        "print('Allow edit to calc.py? [y/N]', flush=True)\ntime.sleep(600)\n"
    )
    hang.chmod(0o755)
    root = make_repo(tmp_path / "repo", FILES, explore_config=f'\n[tool.explore.agents.qwen]\nbin = "{hang}"\n')
    code, summary, stderr = run_cli(
        [
            "run",
            str(root),
            "--agent",
            "qwen",
            "--parallel",
            "1",
            "--max-iterations",
            "1",
            "--branch-timeout",
            "8",
            "--json",
        ]
    )
    assert summary is not None and code == 1, stderr
    [candidate] = summary["iterations"][0]["candidates"]
    assert candidate["status"] == "timeout" and "Allow edit to calc.py? [y/N]" in candidate["reason"]
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(hang) in " ".join(p.info["cmdline"] or [])]
    assert_no_debris(root)


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        (401, None, "auth"),
        (None, "Failed to authenticate. API Error: 401 invalid x-api-key", "auth"),
        (None, "API key not valid. Please pass a valid API key.", "auth"),
        (529, None, "rate_limit"),
        (None, "exceeded retry limit, last status: 429 Too Many Requests", "rate_limit"),
        (None, "RESOURCE_EXHAUSTED: Quota exceeded for quota metric", "rate_limit"),
        (None, "Overloaded", "rate_limit"),
        (None, "Error: ENOENT: no such file calc.py", None),
    ],
)
def test_failure_classes(status: int | None, error: str | None, expected: str | None) -> None:
    assert classify(Outcome(error=error, status=status), "") == expected


def test_claude_code_result_line() -> None:
    line = json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "api_error_status": 429,
            "num_turns": 1,
            "result": "API Error: 429 rate_limit_error",
            "session_id": "s-9",
            "total_cost_usd": 0.0123,
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_read_input_tokens": 7,
                "cache_creation_input_tokens": 3,
            },
        }
    )
    outcome = ADAPTERS["claude-code"].parse('{"type":"system","subtype":"init"}\nsome stderr\n' + line + "\n")
    assert (outcome.session_id, outcome.status, outcome.error) == ("s-9", 429, "API Error: 429 rate_limit_error")
    assert outcome.usage.model_dump() == {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 7,
        "cache_creation_input_tokens": 3,
        "cost_usd": 0.0123,
        "calls": 1,
    }


def test_a_rate_limited_agent_before_mutate_hands_over_at_the_next_iteration(tmp_path: Path) -> None:
    """mutate plans from the code first: the agent's candidates crash (the run goes on) and the next
    iteration's proposal passes the agent over, saying why."""
    error = json.dumps(
        {"session_id": "g-3", "error": {"type": "Error", "message": "429 Too Many Requests", "code": 429}}
    )
    binary = stand_in(tmp_path / "bin", "gemini", [], error, edit=False, exit_code=1)
    root = make_repo(tmp_path / "repo", FILES, explore_config=f'\n[tool.explore.agents.gemini]\nbin = "{binary}"\n')
    code, summary, stderr = run_cli(["run", str(root), "--agent", "gemini,mutate", "--parallel", "2", "--json"])
    assert summary is not None and code == 0, stderr
    first, second = summary["iterations"][:2]
    assert all(
        c["status"] == "crashed" and "mutate proposes next iteration" in c["reason"] for c in first["candidates"]
    )
    assert second["fallbacks"] and "gemini unavailable in the last iteration" in second["fallbacks"][0]
    assert second["candidates"][0]["generator"] == "mutate" and "return a + b" in (root / "calc.py").read_text()
    assert_no_debris(root)


def old_claude(bin_dir: Path, version: str, help_text: str) -> Path:
    """A `claude` that says its version and help, and would fix calc.py if it were ever run."""
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / "claude"
    path.write_text(
        textwrap.dedent(f"""\
        #!{sys.executable}
        import pathlib, sys
        if sys.argv[1:] == ["--version"]:
            print({version!r} + " (Claude Code)")
        elif sys.argv[1:] == ["--help"]:
            print({help_text!r})
        else:
            pathlib.Path("ran").write_text(" ".join(sys.argv[1:]))
        """)
    )
    path.chmod(0o755)
    return path


HELP = (
    "Usage: claude [options]\n  -p, --print  Print\n  --output-format <f>\n  --permission-mode <m>\n  --tools <t...>\n"
)


@pytest.mark.parametrize(
    ("version", "help_text", "why"),
    [("2.0.14", HELP, "older than 2.1.197"), ("2.1.200", HELP.replace("--tools", "--allowedTools"), "--tools")],
)
def test_a_claude_code_too_old_to_run_safely_stops_before_anything_with_exit_2(
    tmp_path: Path, version: str, help_text: str, why: str
) -> None:
    binary = old_claude(tmp_path / "bin", version, help_text)
    root = make_repo(
        tmp_path / "repo", FILES, explore_config=f'\n[tool.explore.agents.claude-code]\nbin = "{binary}"\n'
    )
    code, summary, stderr = run_cli(["run", str(root), "--agent", "claude-code", "--parallel", "2", "--json"])
    assert code == 2 and summary is not None and summary["status"] == "error", stderr
    error = summary["error"]
    assert "--agent claude-code" in error and version in error and "2.1.197 or newer" in error and why in error
    assert not (root / "ran").exists() and not list((tmp_path / "repo").rglob("ran"))
    assert not (root / ".explore" / "runs").exists() or not any((root / ".explore" / "runs").iterdir())


def test_flags_a_release_does_not_know_are_left_out_with_their_values() -> None:
    from explore.generators.agents.versions import Capabilities, fit

    support = ADAPTERS["claude-code"].support
    flags = ADAPTERS["claude-code"].argv(AgentSettings(), "coder", Path("p.md"), 0.5)
    old = fit(flags, Capabilities("2.1.197", HELP + "  --verbose\n  --no-session-persistence\n"), support)
    assert "--permission-prompts" not in old and "none" not in old and "--max-budget-usd" not in old
    assert old[old.index("--tools") + 1] == "Read,Edit,Write,Glob,Grep" and "--no-session-persistence" in old
    assert fit(flags, Capabilities(None, ""), support) == flags  # an unreadable help: every flag kept


def test_an_npm_installed_cli_is_known_by_its_package_version_without_starting_it_for_it(tmp_path: Path) -> None:
    """node_modules/.bin/claude → the package's own file: the version is its package.json's and only
    --help is asked (a CLI's start-up is the probe's cost); a binary of no package is asked --version."""
    from explore.generators.agents.versions import learn, package_version

    package = tmp_path / "node_modules" / "@anthropic-ai" / "claude-code"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"version": "2.1.300", "bin": {"claude": "cli.py"}}))
    (package / "cli.py").write_text(
        f"#!{sys.executable}\nimport sys\nopen({str(tmp_path / 'asked')!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        f"print('9.9.9 (Claude Code)' if sys.argv[1:] == ['--version'] else {HELP!r})\n"
    )
    (package / "cli.py").chmod(0o755)
    (tmp_path / "node_modules" / ".bin").mkdir()
    (tmp_path / "node_modules" / ".bin" / "claude").symlink_to(package / "cli.py")
    found = learn(str(tmp_path / "node_modules" / ".bin" / "claude"), ("--help",), {})
    assert found.version == "2.1.300" and found.knows("--tools")
    assert (tmp_path / "asked").read_text().splitlines() == ["--help"]
    assert package_version(package / "package.json") is None  # not a file its `bin` names
    assert learn(str(old_claude(tmp_path / "bin", "2.1.250", HELP)), ("--help",), {}).version == "2.1.250"


def test_every_candidate_crashing_alike_stops_the_run_at_once(tmp_path: Path) -> None:
    """Two candidates, one message: exit 3 after the first iteration, not max iterations spent;
    an agent refusing its own command line is exit 2."""
    config = "\n[tool.explore.agents.broken]\ncmd = \"echo 'settings file missing: ~/.agentrc' >&2; exit 4\"\n"
    root = make_repo(tmp_path / "repo", FILES, explore_config=config)
    code, summary, stderr = run_cli(
        ["run", str(root), "--agent", "broken", "--parallel", "2", "--max-iterations", "3", "--json"]
    )
    assert summary is not None and code == 3 and summary["status"] == "escalated", stderr
    assert len(summary["iterations"]) <= 1 and "settings file missing" in summary["escalation"]["reason"]
    config = (
        '\n[tool.explore.agents.old]\ncmd = "echo \\"error: unknown option \'--permission-prompts\'\\" >&2; exit 1"\n'
    )
    root = make_repo(tmp_path / "repo2", FILES, explore_config=config)
    code, summary, stderr = run_cli(
        ["run", str(root), "--agent", "old", "--parallel", "1", "--max-iterations", "3", "--json"]
    )
    assert summary is not None and code == 2 and "unknown option '--permission-prompts'" in summary["error"], stderr
    assert_no_debris(root)


def test_a_fleet_deals_in_turn_then_by_what_won_here_and_tallies_each_agent(tmp_path: Path) -> None:
    """Run 1, `--agent idle --agent fixer --parallel 3`, no history: a and c from idle, b from fixer,
    whose fix is merged; the JSON names each candidate's agent, `agents` tallies them, and the
    iteration's history.jsonl record keeps the tally. Run 2 deals by what won (Thompson sampling,
    said in the header, as dealt). Run 3, `--deal even`: in turn, and the rate-limited slot's
    candidate is handed to another slot's agent, which `fallbacks` says."""
    busy = stand_in(
        tmp_path / "bin", "gemini", [], json.dumps({"error": {"message": "429 Too Many Requests"}}), False, 1
    )
    config = (
        '\n[tool.explore.agents.idle]\ncmd = "true"\n'
        "[tool.explore.agents.fixer]\ncmd = \"sed -i 's/a - b/a + b/' calc.py\"\n"
        f'[tool.explore.agents.gemini]\nbin = "{busy}"\n'
    )
    root = make_repo(tmp_path / "repo", FILES, explore_config=config)
    fleet = ["run", str(root), "--agent", "idle", "--agent", "fixer", "--parallel", "3", "--json"]
    code, summary, stderr = run_cli(fleet)
    assert summary is not None and code == 0 and summary["status"] == "succeeded", stderr
    assert "deal: 3 candidates of iteration 1 to 2 slots, in turn (no iteration of these agents" in stderr
    [iteration] = summary["iterations"]
    assert [(c["id"], c["generator"]) for c in iteration["candidates"]] == [
        ("a", "idle"),
        ("b", "fixer"),
        ("c", "idle"),
    ]
    assert iteration["winner"] == "b" and "return a + b" in (root / "calc.py").read_text()
    assert summary["agents"]["idle"]["candidates"] == 2 and summary["agents"]["idle"]["wins"] == 0
    assert {k: summary["agents"]["fixer"][k] for k in ("candidates", "ok", "wins")} == {
        "candidates": 1,
        "ok": 1,
        "wins": 1,
    }
    assert "a fleet of 2 slots" in stderr and "candidates: a idle, b fixer, c idle" in stderr  # the live view
    report = Path(summary["report"]).read_text()
    rows = {
        line.split(" | ")[0]: line
        for line in report.splitlines()
        if line.startswith("| a |") or line.startswith("| b |")
    }
    assert rows["| a"].endswith("| idle |") and rows["| b"].endswith("| fixer |")
    assert "## Agents" in report and "| fixer | 1 | 1 | 1 |" in report and "| idle | 2 | 0 | 0 |" in report
    records = [json.loads(line) for line in (root / ".explore" / "history.jsonl").read_text().splitlines()]
    [agents] = [r["agents"] for r in records if r["n"] == 1]
    assert (agents["idle"]["candidates"], agents["fixer"]["wins"]) == (2, 1)
    assert_no_debris(root)

    (root / "calc.py").write_text(FILES["calc.py"])
    subprocess_git(root)
    code, summary, stderr = run_cli(fleet)
    assert summary is not None and code == 0, stderr
    assert "by what wins here (Thompson sampling over the iterations each slot took part in" in stderr
    made = [c["generator"] for c in summary["iterations"][0]["candidates"]]
    said = re.search(r"idle (\d) \(won 0 of 1 iterations\), fixer (\d) \(won 1 of 1 iterations\)", stderr)
    assert said and (made.count("idle"), made.count("fixer")) == (int(said[1]), int(said[2]))  # as dealt
    assert_no_debris(root)

    (root / "calc.py").write_text(FILES["calc.py"])
    subprocess_git(root)
    code, summary, stderr = run_cli(
        ["run", str(root), "--agent", "gemini", "--agent", "fixer", "--parallel", "2", "--deal", "even", "--json"]
    )
    assert summary is not None and code == 0 and "in turn (--deal even)" in stderr, stderr
    [iteration] = summary["iterations"]
    assert {c["generator"] for c in iteration["candidates"]} == {"fixer"}
    assert any(
        "gemini" in why and "429" in why and "fixer took it over" in why
        for why in iteration["candidates"][0]["fallbacks"]
    )
    assert_no_debris(root)


def subprocess_git(root: Path) -> None:
    import subprocess

    subprocess.run(["git", "commit", "-qam", "break add again"], cwd=root, check=True, capture_output=True)


def test_agent_slots_in_the_options_and_the_resolved_fleet() -> None:
    from explore.generators import create, resolve_agent
    from explore.generators.fleet import FleetGenerator
    from explore.model.config import Options

    assert Options.model_validate({"agent": ["mutate,command", "mutate"]}).agent == ["mutate,command", "mutate"]
    assert Options.model_validate({"agent": ["mutate"]}).agent == "mutate"
    resolved = resolve_agent(["mutate,command", "command"], "true")
    assert resolved == "mutate,command + command"
    fleet = create(resolved, {"agent_cmd": "true"})
    assert isinstance(fleet, FleetGenerator) and [s.name for s in fleet.slots] == ["mutate,command", "command"]
    assert fleet.dealt(3) == [0, 1, 0]
