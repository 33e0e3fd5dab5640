"""The generator end to end at the protocol level: propose (debugger) and realise (coder) on
real git worktrees, the real SDK, and a scripted transport."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand
from explore.generators.anthropic import AnthropicGenerator
from explore.generators.anthropic.context import assemble
from explore.generators.anthropic.scripted import Failure, ScriptedAPI
from explore.generators.base import CandidateContext, ProposalRequest
from explore.model.candidates import Realised
from explore.model.errors import BudgetExhausted, Escalation
from explore.model.testresults import TestOutcome

KEY = "sk-ant-test-generator-SECRET-42"
LONGREPR = """    def test_add():
>       assert add(2, 3) == 5
E       assert -1 == 5

tests/test_calc.py:4: AssertionError
calc.py:2: in add
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[tuple[Path, Path, str]]:
    root = tmp_path / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (root / "secret.txt").write_text(f"token={KEY}\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    head = git(root, "rev-parse", "HEAD")
    wt = tmp_path / "wt"
    git(root, "worktree", "add", "-q", "--detach", str(wt), head)
    yield root, wt, head
    git(root, "worktree", "remove", "--force", str(wt))


def request(
    root: Path, wt: Path, head: str, strategy: str = "conservative", n: int = 3, **kw: object
) -> ProposalRequest:
    run_dir = root.parent / "run" / "iteration-1"
    run_dir.mkdir(parents=True, exist_ok=True)
    failing = [
        TestOutcome(id="tests/test_calc.py::test_add", outcome="failed", message="assert -1 == 5", longrepr=LONGREPR)
    ]
    return ProposalRequest(
        repo_root=root,
        scratch=wt,
        current_commit=head,
        base_commit=head,
        n=n,
        iteration=1,
        strategy=load_strategies()[strategy],
        failing=failing,
        passing=[],
        test_command=TestCommand(python="python"),
        run_dir=run_dir,
        test_patterns=["tests/*"],
        **kw,
    )


def diagnosis(level: str = "high", **over: object) -> dict:
    data = {
        "failure_classification": "test_failure",
        "root_cause": "add subtracts",
        "root_cause_location": {"file": "calc.py", "line": 2, "context": "return a - b"},
        "fix": {
            "description": "add",
            "changes": [{"file": "calc.py", "line": 2, "current": "a - b", "should_be": "a + b"}],
        },
        "confidence": {"level": level, "reason": "the test says so"},
    }
    return {**data, **over}


def generator(api: ScriptedAPI, **options: object) -> AnthropicGenerator:
    return AnthropicGenerator(
        {"anthropic": {"debugger": ["d1", "d2"], "coder": ["c1", "c2"]}, **options},
        http_client_factory=lambda: httpx2.AsyncClient(transport=api.transport()),
    )


CODER = [
    [("read_file", {"path": "calc.py"})],
    [("replace_in_file", {"path": "calc.py", "old": "a - b", "new": "a + b"})],
    [("finish", {"summary": "add adds", "confidence": 0.9})],
]


async def realise(api: ScriptedAPI, repo: tuple[Path, Path, str], **options: object) -> Realised:
    """One coder on the top diagnosis in the fixture's worktree (files in root.parent/files)."""
    root, wt, head = repo
    req = request(root, wt, head)
    files = root.parent / "files"
    files.mkdir()
    plan = (await generator(ScriptedAPI(debugger=[[("submit_diagnosis", diagnosis())]])).propose(req)).plans[0]
    return await generator(api, **options).realise(
        plan,
        CandidateContext(
            workdir=wt, candidate_id="a", iteration=1, strategy=req.strategy, files_dir=files, request=req
        ),
    )


@pytest.mark.anyio
async def test_propose_then_realise(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    api = ScriptedAPI(debugger=[[("read_file", {"path": "calc.py"})], [("submit_diagnosis", diagnosis())]], coder=CODER)
    gen = generator(api)
    req = request(root, wt, head)
    proposal = await gen.propose(req)
    assert (
        len(proposal.plans) == 3 and proposal.plans[0].confidence == 0.85 and proposal.plans[0].location == "calc.py:2"
    )
    assert proposal.usage.llm.calls == 2 and proposal.usage.llm.cost_usd > 0
    ctx = CandidateContext(
        workdir=wt, candidate_id="a", iteration=1, strategy=req.strategy, files_dir=root.parent / "files", request=req
    )
    ctx.files_dir.mkdir()
    realised = await gen.realise(proposal.plans[0], ctx)
    assert (wt / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert realised.confidence == 0.9 and realised.hypothesis == "add adds" and realised.usage.llm.calls == 3
    assert gen.usage.llm.calls == 5
    # the shared context is a cache_control block; the coder's prefix was written to the cache once
    first = api.requests[2]["body"]["messages"][0]["content"][0]
    assert first["cache_control"] == {"type": "ephemeral"} and "Failing tests" in first["text"]
    # the key never reaches a prompt or a written file (secret.txt holds it, and the model could read it)
    assert all(KEY not in json.dumps(r["body"]) for r in api.requests)
    for path in root.parent.rglob("*"):
        if path.is_file() and ".git" not in path.parts and path.name != "secret.txt":
            assert KEY not in path.read_text(errors="replace"), path


@pytest.mark.anyio
async def test_exploratory_asks_for_distinct_hypotheses(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    other = diagnosis("medium", root_cause="wrong operator in helper", fix={"description": "other", "changes": []})
    api = ScriptedAPI(debugger=[[("submit_diagnosis", diagnosis()), ("submit_diagnosis", other)], "that is all"])
    proposal = await generator(api).propose(request(root, wt, head, "exploratory", n=3))
    assert [p.confidence for p in proposal.plans] == [0.85, 0.6]
    assert "2 distinct" in (proposal.reason or "")
    assert "Submit 3 DISTINCT" in api.requests[0]["body"]["messages"][0]["content"][1]["text"]


@pytest.mark.anyio
async def test_each_distinct_diagnosis_gets_its_own_reask(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    bad = {"failure_classification": "gremlins"}
    other = diagnosis("medium", root_cause="wrong operator in helper", fix={"description": "other", "changes": []})
    api = ScriptedAPI(
        debugger=[
            [("submit_diagnosis", bad)],
            [("submit_diagnosis", diagnosis())],
            [("submit_diagnosis", bad)],
            [("submit_diagnosis", other)],
        ]
    )
    proposal = await generator(api).propose(request(root, wt, head, "exploratory", n=2))
    assert [r["model"] for r in api.requests] == ["d1"] * 4 and len(proposal.plans) == 2


@pytest.mark.anyio
async def test_malformed_diagnosis_is_reasked_once_then_falls_back(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    bad = {"failure_classification": "gremlins", "root_cause": "?"}
    api = ScriptedAPI(
        debugger=[[("submit_diagnosis", bad)], [("submit_diagnosis", bad)], [("submit_diagnosis", diagnosis())]]
    )
    proposal = await generator(api).propose(request(root, wt, head))
    assert [r["model"] for r in api.requests] == ["d1", "d1", "d2"]
    reask = api.requests[1]["body"]["messages"][-1]["content"][0]
    assert reask["is_error"] is True and "failure_classification" in reask["content"]
    assert len(proposal.plans) == 3


@pytest.mark.anyio
async def test_low_confidence_falls_back_to_the_next_model(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    api = ScriptedAPI(debugger=[[("submit_diagnosis", diagnosis("low"))], [("submit_diagnosis", diagnosis("high"))]])
    proposal = await generator(api).propose(request(root, wt, head))
    assert [r["model"] for r in api.requests] == ["d1", "d2"] and proposal.plans[0].confidence == 0.85


@pytest.mark.anyio
@pytest.mark.parametrize(
    "over, category",
    [
        ({"escalate_immediately": True, "escalation_category": "destructive"}, "destructive"),
        ({"failure_classification": "task_spec_error"}, "ambiguous_requirements"),
        ({"out_of_scope": True, "out_of_scope_reason": "bug in numpy", "upstream_dependency": "numpy"}, "out_of_scope"),
    ],
)
async def test_diagnosis_escalations(repo: tuple[Path, Path, str], over: dict, category: str) -> None:
    root, wt, head = repo
    api = ScriptedAPI(debugger=[[("submit_diagnosis", diagnosis(**over))]])
    with pytest.raises(Escalation) as info:
        await generator(api).propose(request(root, wt, head))
    assert info.value.category == category
    assert info.value.usage["calls"] == 1 and info.value.usage["cost_usd"] > 0  # the run books what the diagnosis cost
    assert (
        "outside this repository" if category == "out_of_scope" else "a person is needed"
    ) in info.value.reason.lower()


@pytest.mark.anyio
async def test_401_escalates_from_propose(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    api = ScriptedAPI(failures=[Failure(401)])
    with pytest.raises(Escalation) as info:
        await generator(api).propose(request(root, wt, head))
    assert info.value.category == "external_service" and len(api.requests) == 1


@pytest.mark.anyio
async def test_api_down_on_every_model_escalates(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    api = ScriptedAPI(failures=[Failure(503, {"retry-after": "0.001"}) for _ in range(20)])
    with pytest.raises(Escalation, match="any configured model"):
        await generator(api, anthropic={"debugger": ["d1", "d2"], "max_retries": 1}).propose(request(root, wt, head))


@pytest.mark.anyio
async def test_coder_refused_paths_and_continues(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    api = ScriptedAPI(
        coder=[
            [
                ("write_file", {"path": "../outside.py", "content": "x"}),
                ("write_file", {"path": "/etc/hosts", "content": "x"}),
            ],
            [("replace_in_file", {"path": "tests/test_calc.py", "old": "5", "new": "-1"})],
            *CODER[1:],
        ]
    )
    realised = await realise(api, repo)
    assert not (root.parent / "outside.py").exists() and Path("/etc/hosts").read_text() != "x"
    results = api.requests[1]["body"]["messages"][-1]["content"]
    assert [r["is_error"] for r in results] == [True, True] and "refused" in results[0]["content"]
    assert api.requests[2]["body"]["messages"][-1]["content"][0]["is_error"] is True  # test files are read-only
    assert realised.confidence == 0.9 and "a + b" in (wt / "calc.py").read_text()
    assert "refused" in (root.parent / "files" / "anthropic-coder.jsonl").read_text()


@pytest.mark.anyio
async def test_budget_exhausted_before_the_call(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    api = ScriptedAPI(debugger=[[("submit_diagnosis", diagnosis())]])
    with pytest.raises(BudgetExhausted):
        await generator(api, budget_usd=1e-6).propose(request(root, wt, head))
    assert api.requests == []


@pytest.mark.anyio
async def test_context_truncation_says_what_was_cut(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    req = request(root, wt, head)
    req.failing[0].longrepr = "HEAD-MARK\n" + "x" * 50_000 + "\ncalc.py:2: in add\nTAIL-MARK\n"
    ctx = await assemble(req, wt, token_budget=2_000)
    assert len(ctx.text) < 2_000 * 4
    assert "HEAD-MARK" in ctx.text and "TAIL-MARK" in ctx.text and "characters cut" in ctx.text
    assert ctx.cut and "failures" in ctx.cut[0] and "may be explained by what was cut" in ctx.text
    assert "return a - b" in ctx.text  # the code around the failure


@pytest.mark.anyio
async def test_context_shows_what_the_failing_test_called_before_its_assert(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    (wt / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef helper():\n    return 1\n\n\ndef test_helper():\n    assert helper() == 1\n\n\n"
        "def test_add():\n    total = add(2, 3)\n    assert total == 5\n"
    )
    req = request(root, wt, head)
    req.failing[
        0
    ].longrepr = "    def test_add():\n        total = add(2, 3)\n>       assert total == 5\nE       assert -1 == 5\n\ntests/test_calc.py:14: AssertionError\n"
    ctx = await assemble(req, wt)
    assert "#### calc.py:1 — add" in ctx.text and "return a - b" in ctx.text  # one hop from the line before the assert
    assert "— helper" not in ctx.text  # a nearby test's calls are not followed


def test_a_resumed_run_counts_what_it_spent_before_against_the_budget() -> None:
    fresh = AnthropicGenerator({"budget_usd": 0.05})
    fresh.ledger.reserve("claude-sonnet-5-5", 4_000)  # ~$0.012: fits in a fresh budget
    spent = {"cost_usd": 0.049, "calls": 7.0, "input_tokens": 9_000.0, "mutants_screened": 3.0}  # the saved run usage
    resumed = AnthropicGenerator({"budget_usd": 0.05, "spent": spent})
    assert resumed.ledger.total["calls"] == 7 and "mutants_screened" not in resumed.ledger.total
    with pytest.raises(BudgetExhausted, match=r"\$0\.0490 of --budget-usd"):
        resumed.ledger.reserve("claude-sonnet-5-5", 4_000)


@pytest.mark.anyio
async def test_surgical_context_starts_from_the_change_that_regressed(repo: tuple[Path, Path, str]) -> None:
    root, wt, good = repo
    (wt / "calc.py").write_text("def add(a, b):\n    return a + b  # REGRESSING-EDIT\n")
    git(wt, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "the regressing change")
    bad = git(wt, "rev-parse", "HEAD")
    req = request(root, wt, bad, strategy="surgical", regression=(good, bad))
    ctx = await assemble(req, wt)
    assert (
        f"The change that regressed ({good[:10]}..{bad[:10]}" in ctx.text
        and "+    return a + b  # REGRESSING-EDIT" in ctx.text
    )
    others = await assemble(request(root, wt, bad, strategy="conservative", regression=(good, bad)), wt)
    assert "The change that regressed" not in others.text  # only the surgical shape starts from it
    backwards = await assemble(request(root, wt, bad, strategy="surgical", regression=(bad, good)), wt)
    assert "The change that regressed" not in backwards.text  # `after` must descend from `before`


@pytest.mark.anyio
async def test_coder_turns_are_bounded(repo: tuple[Path, Path, str]) -> None:
    api = ScriptedAPI(coder=[[("read_file", {"path": "calc.py"})]] * 30)  # never finishes
    realised = await realise(api, repo, anthropic={"debugger": ["d1"], "coder": ["c1"], "max_turns": 3})
    assert len(api.requests) == 3
    assert realised.confidence == 0.2 and "stopped without finish after 3 turn(s)" in (realised.hypothesis or "")


@pytest.mark.anyio
async def test_context_tells_what_earlier_iterations_tried(repo: tuple[Path, Path, str]) -> None:
    from explore.model.candidates import CandidateResult, CandidateStatus, IterationRecord

    root, wt, head = repo
    tried = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n-    return a - b\n+    return b - a\n"
    earlier = IterationRecord(
        n=1,
        strategy="aggressive",
        pass_rate=40.0,
        candidates=[
            CandidateResult(
                id="a",
                status=CandidateStatus.ok,
                pass_rate=40.0,
                hypothesis="swap the operands of add",
                files_changed=["calc.py"],
                reason="did not improve the pass rate",
            )
        ],
    )
    ctx = await assemble(request(root, wt, head, history=[earlier], tried_patches=[tried]), wt)
    assert "iteration 1 (aggressive): pass rate after 40.0%" in ctx.text
    assert "a: swap the operands of add [calc.py] → 40.0%, did not improve the pass rate" in ctx.text
    assert "never propose these again" in ctx.text and "+    return b - a" in ctx.text


@pytest.mark.anyio
async def test_invalid_finish_is_reasked_once_then_the_next_coder_model_takes_over(
    repo: tuple[Path, Path, str],
) -> None:
    bad = [("finish", {"summary": "done", "confidence": 7})]
    api = ScriptedAPI(coder=[bad, bad, [("finish", {"summary": "done", "confidence": 0.7})]])
    realised = await realise(api, repo)
    assert [r["model"] for r in api.requests] == ["c1", "c1", "c2"] and realised.confidence == 0.7
    assert "call finish again" in json.dumps(api.requests[1]["body"]["messages"][-1])


@pytest.mark.anyio
async def test_invalid_finish_on_the_last_coder_model_keeps_the_edits(repo: tuple[Path, Path, str]) -> None:
    root, wt, head = repo
    bad = [("finish", {"summary": "done", "confidence": 7})]
    api = ScriptedAPI(coder=[CODER[1], bad, bad, bad])
    realised = await realise(api, repo, anthropic={"debugger": ["d1"], "coder": ["c1"], "max_turns": 4})
    assert len(api.requests) == 4 and realised.confidence == 0.2  # judged by its tests, not thrown away
    assert "a + b" in (wt / "calc.py").read_text()


def test_leading_lines_stop_at_the_enclosing_block_and_are_bounded() -> None:
    from explore.generators.anthropic.context import LEADING, leading_lines

    lines = ["import x", "SETUP = x.load()", "class Config:", "    name = x.name()", "    size = x.size()"]
    assert leading_lines(lines, 5) == ["    name = x.name()", "    size = x.size()"]  # a class body: from the class
    assert leading_lines(lines, 2) == ["SETUP = x.load()"]  # module level: the line alone
    body = ["def test_long():"] + [f"    step_{i}()" for i in range(100)]
    assert len(leading_lines(body, 101)) == LEADING + 1
