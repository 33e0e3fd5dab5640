"""The search past its first answer (deepen.py) on real tiny repositories, and the order of a
program no test passes on (localise.without_contrast)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import git, make_repo
from explore.generators.mutate import MutateGenerator
from explore.generators.mutate.localise import Spectrum, Suspect, asserted_values, rank, without_contrast
from explore.generators.mutate.operators import REGISTRY
from test_mutate_generator import request_for

PAGES = {
    "paging.py": """\
        def pages(total, per_page):
            if total <= 0:
                return 1
            return (total + per_page) // per_page


        def label(page, total, per_page):
            return f"page {page} of {pages(total, per_page)}"
        """,
    "tests/test_paging.py": """\
        from paging import label, pages


        def test_empty():
            assert pages(0, 10) == 1


        def test_partial_last_page():
            assert pages(11, 5) == 3


        def test_exact_multiple():
            assert pages(10, 5) == 2


        def test_label():
            assert label(1, 21, 10) == "page 1 of 3"
        """,
}

AREA = {
    "grid.py": """\
        def inner_cells(width, height):
            return (width + 1) * (height + 1)


        def border(width, height):
            return 2 * (width + height) - 4
        """,
    "tests/test_grid.py": """\
        from grid import border, inner_cells


        def test_border():
            assert border(3, 4) == 10


        def test_inner_square():
            assert inner_cells(4, 4) == 9


        def test_inner_strip():
            assert inner_cells(3, 5) == 8
        """,
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _scratch(tmp_path: Path, files: dict[str, str]) -> Iterator[tuple[Path, Path]]:
    repo = make_repo(tmp_path / "repo", files)
    work = tmp_path / "scratch"
    git(repo, "worktree", "add", "--detach", str(work))
    yield repo, work
    git(repo, "worktree", "remove", "--force", str(work))


@pytest.fixture
def pages_repo(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    yield from _scratch(tmp_path, PAGES)


@pytest.fixture
def area_repo(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    yield from _scratch(tmp_path, AREA)


def _log(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "run" / "mutate" / "search.json").read_text())


@pytest.mark.anyio
async def test_nothing_plausible_widens_to_the_second_tier_past_the_mutant_count(
    pages_repo: tuple[Path, Path], tmp_path: Path
) -> None:
    repo, work = pages_repo
    request = await request_for(repo, work, tmp_path, n=1)
    generator = MutateGenerator({"parallel": 2, "mutate": {"budget_mutants": 10, "budget_seconds": 120}})
    proposal = await generator.propose(request)
    assert proposal.plans, proposal.reason
    assert proposal.plans[0].operator == "step"
    assert "+    return (total + per_page - 1) // per_page\n" in proposal.plans[0].patch
    screened = _log(tmp_path)["screened"]
    assert len(screened) > 10  # the count no longer binds once nothing plausible was found: the seconds do
    second = tuple(op.name for op in REGISTRY if op.tier == 2)
    first_tier = [r for r in screened if not r["mutant"].startswith(second)]
    assert len(first_tier) >= 10 and not any(r["fixed"] for r in first_tier)


@pytest.mark.anyio
async def test_second_order_at_one_line_after_every_single_edit(area_repo: tuple[Path, Path], tmp_path: Path) -> None:
    repo, work = area_repo
    request = await request_for(repo, work, tmp_path, n=1)
    proposal = await MutateGenerator({"parallel": 2, "mutate": {"budget_seconds": 240}}).propose(request)
    assert proposal.plans, proposal.reason
    assert "+    return (width - 1) * (height - 1)\n" in proposal.plans[0].patch
    assert proposal.plans[0].operator.count("+") == 1  # two edits
    rows = _log(tmp_path)["screened"]
    first_pair = next(i for i, r in enumerate(rows) if " + " in r["mutant"])
    assert all(" + " in r["mutant"] for r in rows[first_pair:])  # single edits all came first


def test_asserted_values_reads_the_values_failing_assertions_got() -> None:
    longrepr = "E       assert [] == [[1]]\nE        +  where [] = pick([[1]])\nE   assert count(x) == 3\n"
    assert asserted_values([longrepr]) == {"List(elts=[], ctx=Load())"}
    assert asserted_values(["E       assert 0 == 3"]) == {"Constant(value=0)"}
    assert asserted_values(["AssertionError: nothing to read"]) == frozenset()


def test_without_a_passing_test_the_line_writing_the_asserted_value_comes_first() -> None:
    text = "def pick(groups):\n    n = len(groups)\n    if not groups:\n        return []\n    return n\n"
    lines = {("m.py", line): frozenset({"t1", "t2"}) for line in range(2, 6)}
    spectrum = Spectrum(
        lines, frozenset({"t1", "t2"}), frozenset(), asserted=asserted_values(["E   assert [] == [[]]"])
    )
    tied = rank(spectrum)
    assert [s.line for s in tied] == [2, 3, 4, 5] and len({s.score for s in tied}) == 1  # no contrast: all tie
    ordered = without_contrast(tied, spectrum, {"m.py": text})
    assert ordered[0].line == 4 and ordered[0].score == tied[0].score
    assert all(s.score < tied[0].score for s in ordered[1:])
    with_passing = Spectrum(lines, frozenset({"t1"}), frozenset({"t2"}), asserted=spectrum.asserted)
    suspects = [Suspect((-1.0, True, "m.py", 2), "m.py", 2, 1.0)]
    assert without_contrast(suspects, with_passing, {"m.py": text}) == suspects  # contrast exists: order kept


def test_the_search_settings_read_hyphens_as_the_rest_of_tool_explore() -> None:
    """`budget-seconds = 20` in [tool.explore.mutate] went to `extra`, unread: the search spent 60 s."""
    settings = MutateGenerator({"mutate": {"budget-seconds": 20, "patience": 3, "budget_mutants": 9}}).settings
    assert (settings.budget_seconds, settings.patience, settings.budget_mutants, settings.extra) == (20, 3, 9, {})
