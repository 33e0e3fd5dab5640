"""Surgical's reverts of the regressing change: hunks parsed from a scripted diff (pure), ranked
first by the shaping rule, and proposed first by mutate on a real repository whose history
says which commit dropped the pass rate."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import git, make_repo, write_files
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand, run_tests
from explore.generators.base import ProposalRequest
from explore.generators.mutate import MutateGenerator, revert, shape
from explore.generators.mutate.edits import Edit, Mutant, apply_edits
from explore.generators.mutate.prepared import Prepared
from explore.generators.mutate.screen import Verdict

GOOD = """\
    def price(qty, unit):
        if qty >= 10:
            return qty * unit * 0.9
        return qty * unit


    def label(qty):
        return f"{qty} items"
    """

BAD = GOOD.replace("qty >= 10", "qty > 10").replace("* 0.9", "* 0.8").replace('f"{qty} items"', 'f"{qty} item(s)"')

DIFF = """\
diff --git a/shop.py b/shop.py
index 1111111..2222222 100644
--- a/shop.py
+++ b/shop.py
@@ -2,2 +2,2 @@ def price(qty, unit):
-    if qty >= 10:
-        return qty * unit * 0.9
+    if qty > 10:
+        return qty * unit * 0.8
@@ -8 +8 @@ def price(qty, unit):
-    return f"{qty} items"
+    return f"{qty} item(s)"
@@ -8,0 +9,2 @@ def label(qty):
+
+GONE = 1
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1 @@
+def test_x(): pass
"""


# --- pure: hunks and revert mutants ------------------------------------------------------------


def test_hunks_of_a_scripted_diff_skip_created_files() -> None:
    hunks = revert.parse_hunks(DIFF)
    assert [(h.file, h.new_start, len(h.old), len(h.new)) for h in hunks] == [
        ("shop.py", 2, 2, 2),
        ("shop.py", 8, 1, 1),
        ("shop.py", 9, 0, 2),
    ]
    assert hunks[0].old == ("    if qty >= 10:\n", "        return qty * unit * 0.9\n")


def test_reverts_come_per_hunk_then_all_together_then_per_line() -> None:
    bad = textwrap.dedent(BAD) + "\nGONE = 1\n"
    mutants = revert.reverts(revert.parse_hunks(DIFF), {"shop.py": bad})
    assert [(m.operator, m.line) for m in mutants] == [
        ("revert_hunk", 2),
        ("revert_hunk", 8),
        ("revert_hunk", 9),
        ("revert_change", 2),
        ("revert_line", 2),
        ("revert_line", 3),
    ]
    assert all(m.family == "revert" and m.prior == revert.PRIOR for m in mutants)

    def applied(m: Mutant) -> str:
        return apply_edits(bad, [e for _, e in m.edits])

    assert applied(mutants[0]) == textwrap.dedent(GOOD.replace('f"{qty} items"', 'f"{qty} item(s)"')) + "\nGONE = 1\n"
    assert applied(mutants[3]) == textwrap.dedent(GOOD)  # the whole change undone
    assert "qty >= 10" in applied(mutants[4]) and "* 0.8" in applied(mutants[4])


def test_a_hunk_whose_lines_changed_since_is_not_reverted() -> None:
    moved_on = textwrap.dedent(BAD).replace("qty > 10", "qty > 11")
    operators = [(m.operator, m.line) for m in revert.reverts(revert.parse_hunks(DIFF), {"shop.py": moved_on})]
    assert ("revert_hunk", 2) not in operators and ("revert_hunk", 8) in operators


FAILING = frozenset({"t1", "t2"})


def screened(mutant_line: int, fixed: set[str], operator: str = "op", patch: str = "") -> Prepared:
    m = Mutant(
        "m.py",
        mutant_line,
        0,
        operator,
        "revert" if operator.startswith("revert") else "comparison",
        1.0,
        "a",
        "b",
        False,
        (("m.py", Edit(mutant_line * 100, mutant_line * 100 + 1, "b")),),
    )
    outcomes = {t: ("passed" if t in fixed else "failed") for t in FAILING} | {"p1": "passed"}
    return Prepared(m, 1.0, patch or f"+{operator} {mutant_line}", sorted(FAILING), ["p1"], {}, Verdict("ok", outcomes))


def test_surgical_ranks_plausible_reverts_before_smaller_mutants_and_drops_duplicates() -> None:
    hunk, line = screened(2, {"t1", "t2"}, "revert_hunk"), screened(3, {"t2"}, "revert_line")
    useless = screened(4, set(), "revert_hunk")
    token, same_as_line = screened(3, {"t1", "t2"}), screened(3, {"t2"}, patch="+revert_line 3")
    chosen = shape.choose("minimal", 3, [token, same_as_line], [], first=[useless, line, hunk])
    assert chosen == [hunk, line, token]
    # all hunks together: only when it fixes more than a revert inside it
    both = screened(2, {"t1", "t2"}, "revert_change")
    both.mutant = Mutant(
        "m.py", 2, 0, "revert_change", "revert", 1.0, "a", "b", False, hunk.mutant.edits + line.mutant.edits
    )
    assert shape.choose("minimal", 3, [token], [], first=[hunk, both, line]) == [hunk, line, token]
    assert shape.choose("minimal", 3, [token], [], first=[screened(2, {"t1"}, "revert_hunk"), both])[0] is both
    # without reverts, the smallest full fix leads as before
    assert shape.choose("minimal", 3, [token, same_as_line], [])[0] is token


# --- end to end: mutate proposes the revert first -----------------------------------------------

TESTS = {
    "tests/test_shop.py": """\
        from shop import label, price


        def test_bulk_at_ten():
            assert price(10, 1) == 9.0


        def test_bulk_big():
            assert price(20, 1) == 18.0


        def test_small():
            assert price(2, 1) == 2


        def test_label():
            assert label(1).startswith("1 item")
        """,
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def regressed(tmp_path: Path) -> Iterator[tuple[Path, Path, str, str]]:
    repo = make_repo(tmp_path / "repo", {"shop.py": GOOD, **TESTS})
    good = git(repo, "rev-parse", "HEAD")
    write_files(repo, {"shop.py": BAD})
    git(repo, "commit", "-qam", "regress")
    bad = git(repo, "rev-parse", "HEAD")
    work = tmp_path / "scratch"
    git(repo, "worktree", "add", "--detach", str(work))
    yield repo, work, good, bad
    git(repo, "worktree", "remove", "--force", str(work))


async def surgical_request(
    repo: Path, work: Path, tmp_path: Path, regression: tuple[str, str] | None
) -> ProposalRequest:
    command = TestCommand(python=sys.executable)
    run = await run_tests(command, work, tmp_path / "logs" / "base.log")
    head = git(repo, "rev-parse", "HEAD")
    return ProposalRequest(
        repo_root=repo,
        scratch=work,
        current_commit=head,
        base_commit=head,
        n=3,
        iteration=1,
        strategy=load_strategies()["surgical"],
        failing=[o for o in run.outcomes.values() if o.outcome == "failed"],
        passing=sorted(run.passing()),
        test_command=command,
        run_dir=tmp_path / "run",
        regression=regression,
    )


@pytest.mark.anyio
async def test_surgical_proposes_the_revert_of_the_regressing_hunk_first(
    regressed: tuple[Path, Path, str, str], tmp_path: Path
) -> None:
    repo, work, good, bad = regressed
    request = await surgical_request(repo, work, tmp_path, (good, bad))
    assert sorted(t.id.split("::")[1] for t in request.failing) == ["test_bulk_at_ten", "test_bulk_big"]
    proposal = await MutateGenerator({"parallel": 2, "mutate": {"budget_seconds": 120}}).propose(request)
    first = proposal.plans[0]
    assert first.operator == "revert_hunk" and first.location == "shop.py:2", proposal.reason
    assert (
        "-    if qty > 10:\n-        return qty * unit * 0.8\n+    if qty >= 10:\n+        return qty * unit * 0.9\n"
        in (first.patch or "")
    )
    assert "item(s)" not in (first.patch or "")  # the label hunk regressed nothing: its revert fixes no test
    assert first.confidence == 1.0
    assert [p.operator for p in proposal.plans][1:] == ["revert_line"]  # all hunks at once fixes no more: left out

    # no regression in the history (or one explore cannot trace to an ancestor): no reverts
    for regression in (None, (bad, good)):
        # reverts come first when there are any; a short budget (deepen would widen for 60 s) shows none
        plain = await MutateGenerator({"parallel": 2, "mutate": {"budget_seconds": 8}}).propose(
            await surgical_request(repo, work, tmp_path, regression)
        )
        assert all(not (p.operator or "").startswith("revert") for p in plain.plans), plain.reason


@pytest.mark.anyio
async def test_surgical_widens_to_every_operator_when_no_single_token_edit_helps(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "stock.py": """\
            def available(on_hand, reserved):
                return max(0, reserved - on_hand)
            """,
            "tests/test_stock.py": """\
            from stock import available


            def test_available():
                assert available(5, 2) == 3


            def test_none_left():
                assert available(2, 5) == 0
            """,
        },
    )
    work = tmp_path / "scratch"
    git(repo, "worktree", "add", "--detach", str(work))
    try:
        request = await surgical_request(repo, work, tmp_path, None)
        proposal = await MutateGenerator({"parallel": 2, "mutate": {"budget_seconds": 120}}).propose(request)
        assert proposal.plans, proposal.reason
        assert "max(0, on_hand - reserved)" in (proposal.plans[0].patch or ""), (
            proposal.reason
        )  # a swap: two tokens move
    finally:
        git(repo, "worktree", "remove", "--force", str(work))
