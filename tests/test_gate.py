"""The gate that asks: explore in a real pseudo-terminal (pexpect), a real repository and a real
command agent; each choice acted on at once. And never a prompt where no person can answer."""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
from pathlib import Path

import pexpect
import pytest

from conftest import assert_no_debris, git, make_repo
from explore.cli import gate
from explore.model.candidates import IterationRecord
from explore.model.runstate import EscalationInfo, RunState
from explore.model.testresults import Counts

CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
    "tests/test_calc.py": """\
        from calc import add, mul


        def test_add():
            assert add(2, 3) == 5


        def test_mul():
            assert mul(2, 3) == 6


        def test_zero():
            assert add(0, 0) == 0
    """,
}


def agent(tmp_path: Path, body: str) -> str:
    """A command agent: logs each prompt it is given to prompts.log, then runs body in the worktree."""
    script = tmp_path / "agent.py"
    script.write_text(
        textwrap.dedent(f"""\
        import os, pathlib, sys
        prompt = pathlib.Path(os.environ["EXPLORE_PROMPT_FILE"]).read_text()
        with open({str(tmp_path / "prompts.log")!r}, "a") as log:
            log.write(prompt + "\\n=====\\n")
        source = pathlib.Path("calc.py")
        text = source.read_text()
    """)
        + textwrap.dedent(body)
    )
    return f"{sys.executable} {script}"


def spawn(args: list[str], cwd: Path, **env: str) -> pexpect.spawn:
    environ = {k: v for k, v in os.environ.items() if k != "CI"}
    environ.update(env)
    return pexpect.spawn(
        sys.executable,
        ["-m", "explore", *args],
        cwd=str(cwd),
        env=environ,
        encoding="utf-8",
        dimensions=(40, 140),
        timeout=240,
    )


def finish(child: pexpect.spawn) -> tuple[int, str]:
    out = child.read()
    child.close()
    return child.exitstatus, out


def run_args(cmd: str, *extra: str) -> list[str]:
    return ["run", "--agent", "command", "--agent-cmd", cmd, "--parallel", "1", *extra]


def test_hint_resumes_the_run_and_reaches_the_agents_prompt(tmp_path: Path) -> None:
    """The agent is a named one, defined in [tool.explore.agents]: the gate reads those settings too."""
    cmd = agent(
        tmp_path,
        """\
        if "use plus in add" in prompt:
            source.write_text(text.replace("a - b", "a + b"))
    """,
    )
    repo = make_repo(
        tmp_path / "repo",
        {**CALC, "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"},
        explore_config=f"\n[tool.explore.agents.helper]\ncmd = {json.dumps(cmd)}\n",
    )
    child = spawn(["run", "--agent", "helper", "--parallel", "1", "--max-iterations", "1"], repo)
    child.expect("below the quality gate")
    child.expect("choose")
    child.sendline("h")
    child.expect("hint")
    child.sendline("use plus in add")
    code, out = finish(child)
    assert code == 0, out
    assert "succeeded" in out
    prompts = (tmp_path / "prompts.log").read_text().split("=====")
    assert "use plus in add" not in prompts[0] and "use plus in add" in prompts[1]
    assert "return a + b" in (repo / "calc.py").read_text()  # fast-forwarded onto main
    assert_no_debris(repo)


def test_rollback_moves_the_run_branch_to_the_chosen_iteration(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    base = git(repo, "rev-parse", "HEAD")
    cmd = agent(tmp_path, 'source.write_text(text.replace("a - b", "a + b"))\n')
    child = spawn(run_args(cmd, "--max-iterations", "2", "--no-apply"), repo)
    child.expect("choose")
    child.sendline("r")
    child.expect("after iteration 1")
    child.expect("roll back to")
    child.sendline("0")
    code, out = finish(child)
    assert code == 1, out
    (run_dir,) = (repo / ".explore" / "runs").iterdir()
    assert git(repo, "rev-parse", f"explore/{run_dir.name}") == base
    assert "iteration 0" in out
    state = json.loads((run_dir / "state.json").read_text())
    assert state["current_commit"] == base and state["iterations"] == []
    assert_no_debris(repo)


def test_skip_records_known_failures_and_the_next_run_leaves_them_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    cmd = agent(tmp_path, 'source.write_text(text.replace("a - b", "a + b"))\n')
    child = spawn(run_args(cmd, "--max-iterations", "2"), repo)
    child.expect("choose")
    child.sendline("s")
    code, out = finish(child)
    assert code == 1, out
    known = json.loads((repo / ".explore" / "known-failures.json").read_text())
    assert list(known["tests"]) == ["tests/test_calc.py::test_mul"]
    child = spawn(run_args(cmd, "--no-input"), repo)
    code, out = finish(child)
    assert code == 0, out
    assert "leaving out 1 known failure(s)" in out and "tests/test_calc.py::test_mul" in out
    assert "choose" not in out
    child = spawn(
        run_args(cmd, "--no-input", "--", "tests/test_calc.py"), repo
    )  # named targets: known ones left out too
    code, out = finish(child)
    assert code == 0, out
    assert "leaving out 1 known failure(s)" in out and "targets: 3 test(s), 1 failing" in out
    assert_no_debris(repo)


def test_abort_cleans_up_and_exits_3(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    cmd = agent(tmp_path, 'print("HTTP Error 401: Unauthorized"); sys.exit(1)\n')
    child = spawn(run_args(cmd), repo)
    child.expect("external_service")
    child.expect("choose")
    child.sendline("a")
    code, out = finish(child)
    assert code == 3, out
    assert git(repo, "branch", "--list", "explore/*") == ""
    assert git(repo, "status", "--porcelain") == ""
    assert_no_debris(repo)
    assert not list((tmp_path / "worktrees").rglob("calc.py"))


@pytest.mark.parametrize("how", ["stdin", "json", "ci"])
def test_no_prompt_where_no_person_can_answer(tmp_path: Path, how: str) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    cmd = agent(tmp_path, "")
    args = run_args(cmd, "--max-iterations", "1") + (["--json"] if how == "json" else [])
    if how == "stdin":  # stderr still a terminal, stdin not
        environ = {k: v for k, v in os.environ.items() if k != "CI"}
        line = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "explore", *args])
        child = pexpect.spawn(
            "/bin/sh", ["-c", f"{line} < /dev/null"], cwd=str(repo), env=environ, encoding="utf-8", timeout=240
        )
    else:
        child = spawn(args, repo, **({"CI": "true"} if how == "ci" else {}))
    code, out = finish(child)
    assert code == 1, out
    assert "choose" not in out and "retry with a hint" not in out
    assert_no_debris(repo)


# ----------------------------------------------------------------------------- pure decisions


def _run(**fields) -> RunState:
    return RunState(
        run_id="r1", repo="/x", status="failed", current=Counts(pass_rate=50.0), current_failing=["t::a"], **fields
    )


def test_should_ask_only_a_person_at_a_terminal() -> None:
    run = _run()
    yes = dict(as_json=False, no_input=False, stdin_tty=True, stderr_tty=True, env={})
    assert gate.should_ask(run, **yes)
    assert not gate.should_ask(run, **{**yes, "as_json": True})
    assert not gate.should_ask(run, **{**yes, "no_input": True})
    assert not gate.should_ask(run, **{**yes, "stdin_tty": False})
    assert not gate.should_ask(run, **{**yes, "stderr_tty": False})
    assert not gate.should_ask(run, **{**yes, "env": {"CI": "true"}})
    assert not gate.should_ask(_run().model_copy(update={"status": "succeeded"}), **yes)


def test_ask_reads_until_a_valid_choice_and_lists_rollback_points() -> None:
    run = _run(
        iterations=[
            IterationRecord(n=1, strategy="s", pass_rate=75.0, commit="abc"),
            IterationRecord(n=2, strategy="s", pass_rate=75.0),
        ]
    )
    said: list[str] = []
    answers = iter(["x", "r", "7", "r", "1"])
    decision = gate.ask(run, said.append, lambda prompt: next(answers))
    assert decision == gate.Decision(choice="rollback", to=1)
    assert any("after iteration 1 — 75.0%" in s for s in said) and any("please type one of" in s for s in said)


def test_destructive_fix_needs_an_explicit_yes(tmp_path: Path) -> None:
    run = _run(
        escalation=EscalationInfo(
            category="destructive", reason="candidate b: the fix runs `rm -rf`", suggested_action="review"
        )
    )
    patch = tmp_path / "iteration-1" / "candidate-b" / "candidate.diff"
    patch.parent.mkdir(parents=True)
    patch.write_text("--- a/x.sh\n+++ b/x.sh\n@@ -1 +1 @@\n-echo\n+rm -rf build/\n")
    found = gate.destructive_candidate(run, tmp_path)
    assert found is not None and found.what == "rm -rf build/"
    said: list[str] = []
    answers = iter(["y", "y", "a"])
    assert gate.ask(run, said.append, lambda prompt: next(answers), found).choice == "abort"
    assert any("would destroy: rm -rf build/" in s for s in said) and "  not applied" in said
    answers = iter(["y", "yes"])
    assert gate.ask(run, said.append, lambda prompt: next(answers), found).choice == "apply"


def test_a_destructive_fix_is_applied_only_after_yes_naming_what_it_destroys(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {**CALC, "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"},
    )
    cmd = agent(
        tmp_path,
        'source.write_text(text.replace("a - b", "a + b") + "\\n\\ndef reset():\\n    import shutil\\n    shutil.rmtree(\\"cache\\")\\n")\n',
    )
    child = spawn(run_args(cmd), repo)
    child.expect("destructive")
    child.expect("choose")
    child.sendline("y")
    child.expect(r"would destroy: shutil\.rmtree\(\"cache\"\)")
    child.expect("type yes")
    child.sendline("no")
    child.expect("not applied")
    child.expect("choose")
    child.sendline("y")
    child.expect("type yes")
    child.sendline("yes")
    code, out = finish(child)
    assert code == 0, out
    assert "applied candidate a" in out and "succeeded" in out
    assert 'shutil.rmtree("cache")' in (repo / "calc.py").read_text()
    assert_no_debris(repo)


@pytest.mark.parametrize(
    ("category", "generator", "offered"),
    [
        (None, "anthropic", ["hint", "rollback", "skip", "abort"]),
        (None, "mutate", ["rollback", "skip", "abort"]),
        ("infrastructure", "anthropic", ["skip", "abort"]),
        ("external_service", "command", ["skip", "abort"]),
        ("ambiguous_requirements", "anthropic,mutate", ["hint", "rollback", "skip", "abort"]),
    ],
)
def test_the_gate_offers_only_what_can_help(category: str | None, generator: str, offered: list[str]) -> None:
    escalated = EscalationInfo(category=category, reason="why", suggested_action="what") if category else None
    run = _run(iterations=[IterationRecord(n=1, strategy="s", pass_rate=75.0, commit="abc")], escalation=escalated)
    assert [choice for _, choice, _ in gate.menu(run, None, generator)] == offered
    said: list[str] = []
    gate.ask(run, said.append, lambda prompt: "a", None, generator)
    assert ("cannot use a hint" in said[1]) == (generator == "mutate")
    assert ("no code edit can help" in said[1]) == (category in ("infrastructure", "external_service"))


def test_no_rollback_offered_when_nothing_was_merged() -> None:
    run = _run(iterations=[IterationRecord(n=1, strategy="s", pass_rate=50.0)])
    assert "rollback" not in [choice for _, choice, _ in gate.menu(run, None)]
