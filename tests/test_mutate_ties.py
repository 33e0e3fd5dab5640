"""mutate's search past a tie (ties.py): lines tied at a score are screened nearest the failing
tests first, and a later proposal starts with the tied lines an earlier one left out — real
pytest runs, real fork workers, real git repositories."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import git, make_repo
from explore.edges.strategy_io import load_strategies
from explore.edges.testing import TestCommand, run_tests
from explore.generators.base import ProposalRequest
from explore.generators.mutate import MutateGenerator, localise, ties
from explore.generators.mutate.localise import IMPORT_TIME, Spectrum, Suspect
from explore.generators.mutate.screen import Verdict
from explore.generators.mutate.search import Search

BUG_LINE = 101
"""`REG["limit"] = 6` (the fix: 5), run at import time like the 120 registrations around it."""


def _tied_module() -> str:
    lines = ["REG = {}"]
    for i in range(120):
        lines.append('REG["limit"] = 6' if len(lines) + 1 == BUG_LINE else f'REG["k{i}"] = {i}')
    lines += [
        "",
        "",
        "def clamp(x):",
        '    return min(x, REG["limit"])',
        "",
        "",
        "def double(x):",
        "    return x + x + 1",
        "",
    ]
    return "\n".join(lines)


TIED = {
    "lib.py": _tied_module(),
    "tests/test_lib.py": """\
from lib import clamp, double


def test_clamp_big():
    CHECK


def test_double():
    assert double(2) == 4


def test_clamp_small():
    assert clamp(1) == 1


def test_clamp_mid():
    assert clamp(3) == 3


def test_clamp_four():
    assert clamp(4) == 4
""",
}


HIDDEN = 'if clamp(9) != 5:\n        raise AssertionError("clamp(9) is not 5")'
"""A failure that does not say what value the code produced."""


@pytest.fixture(params=["hidden", "told"])
def tied(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    check = HIDDEN if request.param == "hidden" else "assert clamp(9) == 5"  # told: `assert 6 == 5`
    files = {**TIED, "tests/test_lib.py": TIED["tests/test_lib.py"].replace("CHECK", check)}
    repo = make_repo(tmp_path / "repo", files)
    work = tmp_path / "scratch"
    git(repo, "worktree", "add", "--detach", str(work))
    yield repo, work
    git(repo, "worktree", "remove", "--force", str(work))


async def _request(repo: Path, work: Path, tmp_path: Path, tried: list[str]) -> ProposalRequest:
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
        strategy=load_strategies()["conservative"],
        failing=[o for o in run.outcomes.values() if o.outcome == "failed"],
        passing=sorted(run.passing()),
        test_command=command,
        run_dir=tmp_path / "run",
        tried_patches=tried,
    )


@pytest.mark.anyio
async def test_the_tied_lines_past_the_cut_are_reached(tied: tuple[Path, Path], tmp_path: Path) -> None:
    """The bug's line ties with 120 import-time lines at the top score and sits past the first
    80 of them; a partial fix in double() is plausible, so a proposal never deepens past its cut.
    hidden (the failure does not show the value): the first proposal misses line 101; the second,
    on the same commit with the first's candidates tried, starts the tie with the lines the first
    left out and reaches it (without the rotation it screened the same first 80 lines again and
    proposed equivalent edits of double()). told (`assert 6 == 5`): the line that writes the value
    the test got comes first in the tie, and the first proposal has the fix (without: missed)."""
    repo, work = tied
    told = "assert clamp(9)" in (work / "tests" / "test_lib.py").read_text()
    generator = MutateGenerator({"parallel": 2, "mutate": {"budget_seconds": 600, "partial_patience": 10**6}})
    try:
        first = await generator.propose(await _request(repo, work, tmp_path, []))
        assert first.plans, first.reason
        if told:
            assert any(p.location == f"lib.py:{BUG_LINE}" for p in first.plans), first.reason
            return
        assert all(p.location != f"lib.py:{BUG_LINE}" for p in first.plans), first.reason
        assert "at 80 of 12" in first.reason and "left to a later iteration" in first.reason, first.reason
        assert not first.exhausted  # tied lines left: the search is not complete

        second = await generator.propose(await _request(repo, work, tmp_path, [p.patch for p in first.plans]))
    finally:
        await generator.aclose()
    fix = [p for p in second.plans if p.location == f"lib.py:{BUG_LINE}"]
    assert fix, second.reason
    assert '-REG["limit"] = 6\n+REG["limit"] = 5\n' in fix[0].patch


def _spectrum() -> Spectrum:
    every = frozenset({"t::fail", "t::pass"})
    lines = {
        ("m.py", 1): frozenset({IMPORT_TIME}),  # import time only
        ("m.py", 3): every,  # run by the failing test itself
        ("m.py", 4): every,
        ("m.py", 6): every,  # the traceback's own line
    }
    return Spectrum(
        lines,
        frozenset({"t::fail"}),
        frozenset({"t::pass"}),
        localise.crash_lines(["m.py:6: in g\n"]),
        localise.asserted_values(["E       assert 7 == 3\n"]),
    )


SOURCE = "X = 1\n\ndef f():\n    return 2\n\ndef g():\n    return f()\n\nY = 7\n"
"""Line 6 (`def g():`) is the traceback's line, so g's lines 6–7 are its frame; line 9 holds 7."""


def test_a_tie_is_ordered_by_closeness_to_the_failing_tests() -> None:
    spectrum = _spectrum()
    spectrum.lines[("m.py", 7)] = spectrum.lines[("m.py", 3)]
    spectrum.lines[("m.py", 9)] = frozenset({IMPORT_TIME})
    del spectrum.lines[("m.py", 4)]
    tied = [Suspect((-0.5, "m.py", n), "m.py", n, 0.5) for n in (1, 3, 6, 7, 9)]
    ordered = ties.order(tied, spectrum, {"m.py": SOURCE})
    # traceback line, asserted value, its frame, run by the failing test, import time only
    assert [s.line for s in ordered] == [6, 9, 7, 3, 1]
    assert [s.score for s in ordered] == [0.5] * 5  # the scores themselves are unchanged


def test_a_better_score_still_comes_first_and_searched_lines_go_last_in_their_tie() -> None:
    spectrum = _spectrum()
    suspects = [
        Suspect((-0.4, "m.py", 6), "m.py", 6, 0.4),
        Suspect((-0.9, "m.py", 1), "m.py", 1, 0.9),
        Suspect((-0.4, "m.py", 3), "m.py", 3, 0.4),
        Suspect((-0.4, "m.py", 4), "m.py", 4, 0.4),
    ]
    searched = ties.Searched()
    assert [s.line for s in ties.order(suspects, spectrum, {"m.py": SOURCE}, searched)] == [1, 6, 3, 4]
    searched.add([("m.py", 6), ("m.py", 1)], {"m.py": SOURCE})
    assert [s.line for s in ties.order(suspects, spectrum, {"m.py": SOURCE}, searched)] == [1, 3, 4, 6]
    changed = SOURCE.replace("def g():", "def g(a):")  # a line whose text changed is new again
    assert [s.line for s in ties.order(suspects, spectrum, {"m.py": changed}, searched)] == [1, 6, 3, 4]


DENSITY = "def density(n, m):\n    d = 3 * m\n    d = d / n\n    return d\n"
"""Three lines every failing test runs and no passing test: one tie. Line 2 holds `3 → 4` and
`3 → 2` (the fix), ranked first and second."""


def test_a_line_left_with_mutants_keeps_its_place_at_the_same_commit_and_goes_on_with_them() -> None:
    """networkx's density bug, small: the budget screened `3 → 4` alone at the top line of a tie
    wider than the search keeps; the next iteration at that commit (nothing merged) put the line
    last in its tie, past the cut, and never screened `3 → 2`. Now it keeps its place, and what
    it screened goes last; after a merge the tie rotates as before."""
    tied = frozenset({"t::fail"})
    spectrum = Spectrum({("m.py", n): tied for n in (2, 3, 4)}, tied, frozenset({"t::pass"}))
    sources = {"m.py": DENSITY}
    suspects = localise.rank(spectrum, "ochiai", lambda f: False)
    searched = ties.Searched()
    first = Search(Path("/nowhere"), sources, spectrum, ties.order(suspects, spectrum, sources, searched), max_lines=1)
    ranked = first.ranked()
    prepared = first.prepare(ranked, 100)
    assert prepared[0].mutant.new == "4" and prepared[1].mutant.new == "2"
    prepared[0].verdict = Verdict("ok", {"t::fail": "failed"})  # the budget ends here
    done, unfinished = ties.searched_lines(first, ranked, [prepared[0]])
    assert done == {("m.py", 2)} and unfinished == {("m.py", 2)}
    searched.add(done, sources, [prepared[0]], "c1", unfinished)

    again = ties.order(suspects, spectrum, sources, searched, "c1")
    assert [s.line for s in again] == [2, 3, 4]
    second = Search(Path("/nowhere"), sources, spectrum, again, max_lines=1, seen=searched.seen("c1"))
    order = [m for m, _ in second.ranked()]
    assert (order[0].line, order[0].new) == (2, "2")  # the line's other constant first
    assert (order[-1].line, order[-1].new) == (2, "4")  # what was screened at this commit, last

    merged = ties.order(suspects, spectrum, sources, searched, "c2")
    assert [s.line for s in merged] == [3, 4, 2] and searched.seen("c2") == frozenset()
