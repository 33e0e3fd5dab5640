"""Suspiciousness formulas on a known spectrum, ranking, and the search's budget, dedupe and
determinism (screening through a scripted slot: no processes here)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from explore.generators.mutate import localise, pairing, shape
from explore.generators.mutate import search as search_module
from explore.generators.mutate.formulas import dstar, ochiai, tarantula
from explore.generators.mutate.localise import Spectrum
from explore.generators.mutate.screen import Job, Verdict
from explore.generators.mutate.search import Budget, Search, screen_in_order

# A textbook spectrum: 2 failing tests (f1, f2), 3 passing (p1..p3).
#   line 1: every test            line 2: f1, f2 only (the fault)
#   line 3: f1, p1, p2            line 4: p1, p2, p3 only
LINES = {
    ("m.py", 1): frozenset({"f1", "f2", "p1", "p2", "p3"}),
    ("m.py", 2): frozenset({"f1", "f2"}),
    ("m.py", 3): frozenset({"f1", "p1", "p2"}),
    ("m.py", 4): frozenset({"p1", "p2", "p3"}),
    ("tests/test_m.py", 5): frozenset({"f1", "f2"}),
}
SPECTRUM = Spectrum(LINES, frozenset({"f1", "f2"}), frozenset({"p1", "p2", "p3"}))


def test_counts() -> None:
    assert SPECTRUM.counts("m.py", 1) == (2, 3, 0, 0)
    assert SPECTRUM.counts("m.py", 3) == (1, 2, 1, 1)
    assert SPECTRUM.counts("m.py", 9) == (0, 0, 2, 3)


def test_ochiai_known_values() -> None:
    assert ochiai(2, 0, 0, 3) == 1.0
    assert ochiai(2, 3, 0, 0) == pytest.approx(2 / math.sqrt(2 * 5))
    assert ochiai(1, 2, 1, 1) == pytest.approx(1 / math.sqrt(2 * 3))
    assert ochiai(0, 3, 2, 0) == 0.0


def test_dstar_known_values() -> None:
    assert dstar(2, 3, 0, 0) == pytest.approx(4 / 3)
    assert dstar(1, 2, 1, 1) == pytest.approx(1 / 3)
    assert dstar(2, 0, 0, 3) == 8.0  # perfect line: finite, above every imperfect one
    assert dstar(0, 1, 2, 2) == 0.0


def test_tarantula_known_values() -> None:
    assert tarantula(2, 3, 0, 0) == pytest.approx(0.5)
    assert tarantula(1, 2, 1, 1) == pytest.approx(0.5 / (0.5 + 2 / 3))
    assert tarantula(2, 0, 0, 3) == 1.0
    assert tarantula(0, 3, 2, 0) == 0.0


@pytest.mark.parametrize("formula", sorted(localise.FORMULAS))
def test_every_formula_ranks_the_faulty_line_first_and_never_a_test_file(formula: str) -> None:
    ranked = localise.rank(SPECTRUM, formula, lambda f: localise.is_test_file(f))
    assert (ranked[0].file, ranked[0].line) == ("m.py", 2)
    assert all(s.file == "m.py" for s in ranked)
    assert ("m.py", 4) not in {(s.file, s.line) for s in ranked}  # run by passing tests only
    assert localise.position_of(ranked, "m.py", [2]) == 1.0


def test_import_time_lines_count_for_every_test() -> None:
    spectrum = Spectrum({("m.py", 1): frozenset({""})}, frozenset({"f"}), frozenset({"p"}))
    assert spectrum.counts("m.py", 1) == (1, 1, 0, 0)


def test_ties_break_towards_traceback_lines_then_file_and_line() -> None:
    lines = {("b.py", 1): frozenset({"f"}), ("a.py", 7): frozenset({"f"}), ("a.py", 3): frozenset({"f"})}
    spectrum = Spectrum(lines, frozenset({"f"}), frozenset(), localise.crash_lines(["a.py:7: in g\n    x()\n"]))
    assert [(s.file, s.line) for s in localise.rank(spectrum)] == [("a.py", 7), ("a.py", 3), ("b.py", 1)]


def test_test_files_are_recognised() -> None:
    for path in ("tests/test_x.py", "pkg/tests/util.py", "test_x.py", "x_test.py", "conftest.py", "a/conftest.py"):
        assert localise.is_test_file(path)
    assert localise.is_test_file("checks/x.py", ["checks/*"])
    assert not localise.is_test_file("src/pkg/testing_tools.py")


SOURCE = "def f(a, b):\n    if a < b:\n        return a - b\n    return b\n"


def make_search(tmp_path: Path, **kwargs: object) -> Search:
    lines = {("m.py", 2): frozenset({"f1", "p1"}), ("m.py", 3): frozenset({"f1"}), ("m.py", 4): frozenset({"p1"})}
    spectrum = Spectrum(lines, frozenset({"f1"}), frozenset({"p1"}))
    suspects = localise.rank(spectrum)
    return Search(tmp_path, {"m.py": SOURCE}, spectrum, suspects, **kwargs)  # type: ignore[arg-type]


class ScriptedSlot:
    """Answers from a rule instead of running pytest; records what it was asked."""

    def __init__(self, fixes: set[str]) -> None:
        self.fixes = fixes
        self.asked: list[str] = []

    async def screen(self, job: Job) -> Verdict:
        text = next(iter(job.files.values()))
        self.asked.append(text)
        fixed = any(f in text for f in self.fixes)
        outcomes = {t: "passed" if fixed else "failed" for t in job.phase1} | {t: "passed" for t in job.phase2}
        return Verdict("ok", outcomes)


def test_ranking_is_deterministic_and_most_suspicious_first(tmp_path: Path) -> None:
    first = [m.describe() for m, _ in make_search(tmp_path).ranked()]
    again = [m.describe() for m, _ in make_search(tmp_path).ranked()]
    assert first == again
    assert first[0].startswith("constant at m.py:3") or first[0].startswith("arithmetic at m.py:3")
    scores = [s for _, s in make_search(tmp_path).ranked()]
    assert scores == sorted(scores, reverse=True)


CHOICES = """def pick(n):
    a, b, c, d, e = n, n + 1, n + 2, n + 3, n + 4
    x = a
    if x < 10:
        return x
    return 0
"""


def test_an_operator_that_picks_from_the_program_shares_its_prior_among_its_choices(tmp_path: Path) -> None:
    """cachetools' fix ranked 165th of 206: eight names in scope at each site of the most
    suspicious lines screened before a comparison flipped at a less suspicious one. Line 3 (only
    the failing tests run it) offers five names for `a`; line 4 (0.53 of its weight) one
    comparison: the comparison's flips come before the names, whose scores add up to the
    operator's one prior."""
    (tmp_path / "m.py").write_text(CHOICES)
    failing, passing = frozenset({"f1", "f2"}), frozenset({f"p{i}" for i in range(5)})
    lines = {("m.py", 2): failing | passing, ("m.py", 3): failing, ("m.py", 4): failing | passing}
    spectrum = Spectrum(lines, failing, passing)
    suspects = localise.rank(spectrum, "ochiai", lambda f: False)
    search = Search(tmp_path, {"m.py": CHOICES}, spectrum, suspects)
    ranked = search.ranked()
    names = [(m, s) for m, s in ranked if m.operator == "name" and m.line == 3 and m.old == "a"]
    flips = [i for i, (m, _) in enumerate(ranked) if m.operator == "comparison" and m.line == 4]
    assert len(names) == 5
    assert sum(s for _, s in names) == pytest.approx(0.7)  # the operator's prior, once, at weight 1
    assert max(flips) < min(i for i, (m, _) in enumerate(ranked) if m.operator == "name" and m.line == 3)
    constant = next(s for m, s in ranked if m.operator == "constant" and m.line == 4)
    assert constant == pytest.approx(0.95 * ochiai(2, 5, 0, 0))  # a fixed set of alternatives keeps its prior each


def test_prepare_dedupes_skips_tried_and_unreachable(tmp_path: Path) -> None:
    search = make_search(tmp_path)
    prepared = search.prepare(search.ranked(), 1000)
    texts = [next(iter(p.files.values())) for p in prepared]
    assert len(texts) == len(set(texts))
    assert all(p.phase1 == ["f1"] for p in prepared)
    tried = [prepared[0].patch]
    again = make_search(tmp_path, tried=tried)
    assert prepared[0].patch not in [p.patch for p in again.prepare(again.ranked(), 1000)]
    assert again.skipped["tried"] == 1


def test_single_token_policy_keeps_only_single_token_operators(tmp_path: Path) -> None:
    search = make_search(tmp_path, single_token=True)
    assert {m.operator for m, _ in search.ranked()} <= {
        op
        for op in (
            "comparison",
            "constant",
            "arithmetic",
            "augmented",
            "boolean",
            "remove_not",
            "add_not",
            "name",
            "jump",
        )
    }


@pytest.mark.anyio
async def test_budget_caps_the_count(tmp_path: Path) -> None:
    search = make_search(tmp_path)
    prepared = search.prepare(search.ranked(), 1000)
    slot = ScriptedSlot(set())
    budget = Budget(mutants=3, seconds=60)
    done = await screen_in_order(
        prepared, [slot], budget, lambda p: Job(p.files, p.phase1, p.phase2, 1.0), lambda d: False
    )
    assert len(done) == 3 and len(slot.asked) == 3 and budget.exhausted()


@pytest.mark.anyio
async def test_budget_caps_the_seconds(tmp_path: Path) -> None:
    search = make_search(tmp_path)
    prepared = search.prepare(search.ranked(), 1000)
    budget = Budget(mutants=1000, seconds=0.0)
    done = await screen_in_order(
        prepared, [ScriptedSlot(set())], budget, lambda p: Job(p.files, p.phase1, p.phase2, 1.0), lambda d: False
    )
    assert done == [] and budget.exhausted()


@pytest.mark.anyio
async def test_search_stops_at_enough_full_fixes_and_shapes_candidates(tmp_path: Path) -> None:
    search = make_search(tmp_path)
    prepared = search.prepare(search.ranked(), 1000)
    slot = ScriptedSlot({"return a + b", "return a * b"})
    failing = frozenset({"f1"})
    enough = shape.stop_rule("variations", 2, failing, patience=1000)
    done = await screen_in_order(
        prepared,
        [slot, ScriptedSlot({"return a + b", "return a * b"})],
        Budget(),
        lambda p: Job(p.files, p.phase1, p.phase2, 1.0),
        enough,
    )
    chosen = shape.choose("variations", 2, done, [])
    assert sorted(c.mutant.new for c in chosen) == ["a * b", "a + b"]
    plan = shape.to_plan(chosen[0], failing, max(p.score for p in done))
    assert plan.operator == "arithmetic" and plan.location == "m.py:3" and plan.confidence == 1.0
    assert plan.hypothesis.startswith("arithmetic at m.py:3: `a - b` → ")


def test_combinations_pair_partial_fixes_of_different_tests(tmp_path: Path) -> None:
    search = make_search(tmp_path)
    prepared = search.prepare(search.ranked(), 1000)
    a, b = prepared[0], next(p for p in prepared if p.mutant.line != prepared[0].mutant.line)
    a.phase1, b.phase1 = ["f1", "f2"], ["f1", "f2"]
    a.verdict = Verdict("ok", {"f1": "passed", "f2": "failed"})
    b.verdict = Verdict("ok", {"f1": "failed", "f2": "passed"})
    combos = pairing.combine([a, b], search.sources)
    assert len(combos) == 1 and combos[0][0].parts == tuple(
        sorted((a.mutant, b.mutant), key=lambda m: (m.file, m.line, m.col, m.operator))
    )


def test_without_partial_fixes_the_same_change_at_two_lines_pairs_first(tmp_path: Path) -> None:
    text = "def grade(s):\n    if s > 90:\n        return 'A'\n    if s > 80:\n        return 'B'\n    return 'C'\n"
    lines = {("m.py", n): frozenset({"f1"}) for n in (2, 4, 6)}
    spectrum = Spectrum(lines, frozenset({"f1"}), frozenset())
    search = Search(tmp_path, {"m.py": text}, spectrum, localise.rank(spectrum))
    prepared = search.prepare(search.ranked(), 1000)
    for p in prepared:
        p.verdict = Verdict("ok", {"f1": "failed"})
    first = pairing.combine(prepared, search.sources)[0][0]
    assert first.describe() == "comparison at m.py:2: `s > 90` → `s >= 90` + comparison at m.py:4: `s > 80` → `s >= 80`"


def screened(
    fixes: list[set[str] | None], failing: frozenset[str] = frozenset({"f1", "f2"}), scores: list[float] | None = None
) -> list:
    """A prefix of screened mutants at lines 1, 2, …: None for one that fixes nothing, else the
    failing tests it fixes (breaking nothing); each ranked below the one before unless `scores`."""
    from explore.generators.mutate.edits import Mutant
    from explore.generators.mutate.prepared import Prepared

    out = []
    for line, fixed in enumerate(fixes, start=1):
        mutant = Mutant(
            file="m.py",
            line=line,
            col=0,
            operator="comparison",
            family="operator",
            prior=1.0,
            old="<",
            new="<=",
            single_token=True,
            edits=(),
        )
        outcomes = {t: ("passed" if fixed and t in fixed else "failed") for t in failing}
        item = Prepared(mutant, scores[line - 1] if scores else 1.0 / line, "", sorted(failing), [], {})
        item.verdict = Verdict("ok", outcomes)
        out.append(item)
    return out


def test_early_stop_never_before_the_first_plausible_mutant() -> None:
    enough = shape.stop_rule("variations", 3, frozenset({"f1", "f2"}), patience=2, partial_patience=2)
    nothing = screened([None] * 500)
    assert not any(enough(nothing[:k]) for k in range(len(nothing) + 1))
    assert not enough(screened([None] * 499 + [{"f1", "f2"}]))  # the first full fix: keep going for the others


def test_early_stop_after_patience_past_the_first_full_fix_or_at_n() -> None:
    failing = frozenset({"f1", "f2"})
    enough = shape.stop_rule("variations", 3, failing, patience=5)
    full = {"f1", "f2"}
    assert not enough(screened([None, full] + [None] * 4))
    assert enough(screened([None, full] + [None] * 5))
    assert enough(screened([full, None, full, full]))  # n full fixes: no need to wait
    distinct = shape.stop_rule("distinct", 2, failing, patience=100)
    same_line = screened([full, full])
    same_line[1].mutant = same_line[0].mutant
    assert not distinct(same_line) and distinct(screened([full, full]))


def test_patience_counts_only_mutants_ranked_below_the_first_full_fix() -> None:
    """Mutants ranked as high as the first full fix are all screened, however many: among equals
    the candidates' tests decide which wins, not the order. Fails with patience counted from any
    mutant (the equals 3rd to 7th used it up: it stopped at the 7th, the full fix 8th unseen)."""
    failing, full = frozenset({"f1", "f2"}), {"f1", "f2"}
    enough = shape.stop_rule("variations", 3, failing, patience=5)
    fixes = [None, full, None, None, None, None, None, full] + [None] * 6
    scores = [0.9] + [0.5] * 8 + [0.4] * 5  # 2nd to 9th tie
    assert not any(enough(screened(fixes[:k], scores=scores[:k])) for k in range(1, 14))
    assert enough(screened(fixes, scores=scores))  # five ranked below it, after the ties


class PerTestSlot:
    """Scripted screening: a failing test passes when the mutant's text contains its fix."""

    def __init__(self, fixes: dict[str, str]) -> None:
        self.fixes = fixes

    async def screen(self, job: Job) -> Verdict:
        text = next(iter(job.files.values()))
        outcomes = {t: "passed" if self.fixes.get(t, "\0") in text else "failed" for t in job.phase1}
        return Verdict("ok", outcomes | {t: "passed" for t in job.phase2})


@pytest.mark.anyio
async def test_partial_fixes_wait_longer_so_a_two_location_fix_is_still_found(tmp_path: Path) -> None:
    """Two defects at two lines (as in the demo): each single mutant fixes one failing test.
    The search stops early, yet only after both partial fixes are in (each new one restarts the
    wait); their pair fixes both."""
    text = "def f(a, b):\n    x = a - b\n    y = a * b\n    z = a + b + 1\n    w = b - a - 1\n    return x, y, z, w\n"
    lines = {
        ("m.py", 2): frozenset({"f1"}),
        ("m.py", 3): frozenset({"f2"}),
        ("m.py", 4): frozenset({"f1", "f2"}),
        ("m.py", 5): frozenset({"f1", "f2"}),
        ("m.py", 6): frozenset({"f1", "f2"}),
    }
    failing = frozenset({"f1", "f2"})
    spectrum = Spectrum(lines, failing, frozenset())
    search = Search(tmp_path, {"m.py": text}, spectrum, localise.rank(spectrum))
    prepared = search.prepare(search.ranked(), 1000)
    slot = PerTestSlot({"f1": "x = a + b", "f2": "y = a + b"})
    fixing = sorted(
        next(i for i, p in enumerate(prepared) if fix in next(iter(p.files.values()))) for fix in slot.fixes.values()
    )
    gap = fixing[1] - fixing[0]
    enough = shape.stop_rule("variations", 3, failing, patience=5, partial_patience=gap)
    done = await screen_in_order(prepared, [slot], Budget(), lambda p: Job(p.files, p.phase1, p.phase2, 1.0), enough)
    assert len(done) == fixing[1] + gap + 1 < len(prepared)  # stopped early, `gap` past the latest partial fix
    assert {tuple(p.fixed) for p in done if p.plausible} == {("f1",), ("f2",)}
    pairs = search.prepare(pairing.combine(done, search.sources), 100)
    combos = await screen_in_order(
        pairs, [slot], Budget(), lambda p: Job(p.files, p.phase1, p.phase2, 1.0), lambda d: False
    )
    assert any(shape.is_full(c, failing) for c in combos)
    first = next(p for p in done if p.plausible)
    never = shape.stop_rule("variations", 3, failing, patience=5, partial_patience=len(prepared))
    assert not never(done[: done.index(first)])  # never before the first plausible mutant


@pytest.mark.anyio
async def test_mutants_are_prepared_as_screening_reaches_them(tmp_path: Path) -> None:
    search = make_search(tmp_path)
    prepared = search.prepare(search.ranked(), 1000)
    budget = Budget(mutants=2, seconds=60)
    done = await screen_in_order(
        prepared, [ScriptedSlot(set())], budget, lambda p: Job(p.files, p.phase1, p.phase2, 1.0), lambda d: False
    )
    assert len(done) == 2 and len(prepared.items) == 2  # the rest were never prepared
    assert len(prepared) > 2 and [p.mutant for p in prepared][:2] == [p.mutant for p in done]
    assert search.prepare_s > 0


def _suspects(scores: list[float]) -> list[localise.Suspect]:
    return [localise.Suspect((-s, "m.py", n), "m.py", n, s) for n, s in enumerate(scores, start=1)]


def test_top_lines_keep_the_whole_tie_at_the_cut_up_to_twice_as_many() -> None:
    """cachetools: the faulty loop condition tied with 12 other lines, and the cut at 40 fell
    inside the tie, after it by line number."""
    lines = [s.line for s in search_module.top_lines(_suspects([0.9, 0.5, 0.5, 0.5, 0.2]), 2)]
    assert lines == [1, 2, 3, 4]
    assert [s.line for s in search_module.top_lines(_suspects([0.9, 0.8, 0.5]), 2)] == [1, 2]
    assert len(search_module.top_lines(_suspects([0.5] * 10), 3)) == 6  # never more than twice the cut
    assert len(search_module.top_lines(_suspects([0.5] * 2), 3)) == 2


class ReachSlot:
    """f1 reaches the mutated line, f2 does not; the fix makes both pass. Records each job's tests."""

    def __init__(self, fix: str) -> None:
        self.fix = fix
        self.jobs: list[list[str]] = []

    async def screen(self, job: Job) -> Verdict:
        self.jobs.append(job.phase1 + job.phase2)
        fixed = self.fix in next(iter(job.files.values()))
        return Verdict(
            "ok", {t: "passed" if fixed else "failed" for t in job.phase1} | {t: "passed" for t in job.phase2}
        )


@pytest.mark.anyio
async def test_a_fix_is_run_against_the_failing_tests_it_does_not_reach_and_counts_as_full(tmp_path: Path) -> None:
    """wcwidth: one of 20 failing tests never reached the faulty line, yet the fix made it pass;
    without running it the fix looked partial and the search went on 120 more mutants."""
    lines = {("m.py", 2): frozenset({"f1", "p1"}), ("m.py", 3): frozenset({"f1"}), ("m.py", 4): frozenset({"p1"})}
    spectrum = Spectrum(lines, frozenset({"f1", "f2"}), frozenset({"p1"}))
    search = Search(tmp_path, {"m.py": SOURCE}, spectrum, localise.rank(spectrum))
    prepared = search.prepare(search.ranked(), 1000)
    slot = ReachSlot("return a + b")
    failing = frozenset({"f1", "f2"})
    done = await screen_in_order(
        prepared,
        [slot],
        Budget(),
        lambda p: Job(p.files, p.phase1, p.phase2, 1.0),
        shape.stop_rule("variations", 1, failing, patience=0),
    )
    fix = done[-1]
    assert fix.mutant.new == "a + b" and fix.phase1 == ["f1"] and fix.also == ["f2"]
    assert shape.is_full(fix, failing)
    assert slot.jobs.count(["f2"]) == 1  # asked only for the mutant that fixed what it reaches


def test_the_timeout_is_eight_times_the_tests_own_time_plus_the_rest_of_the_round_trip_once() -> None:
    """jmespath: the calibration's round trip held the worker's first collection (1.5 s), and eight
    times it made a looping mutant cost 12.6 s instead of ~2."""
    from explore.generators.mutate.calibrate import timeout_from

    assert timeout_from(Verdict("ok", duration_s=1.6, tests_s=0.1)) == pytest.approx(8 * 0.1 + 1.5 + 0.5)
    assert timeout_from(Verdict("ok", duration_s=0.2)) == pytest.approx(8 * 0.2 + 0.5)  # not told: the round trip
    assert timeout_from(Verdict("timeout", duration_s=3.7, tests_s=None)) == 30.0
    assert timeout_from(Verdict("ok", duration_s=0.01, tests_s=0.001)) == 0.75
    assert timeout_from(Verdict("ok", duration_s=1.6, tests_s=0.1), round_trip=False) == pytest.approx(8 * 0.1 + 0.5)


def test_the_screening_budget_grows_with_the_failing_tests_own_time() -> None:
    """networkx's density bug: three failing tests of 36 s, two lanes, a flat minute screened one
    mutant; the budget is now a dozen mutants' worth of those tests at the lanes' pace."""
    assert search_module.screening_seconds(60.0, 0.4, 2) == 60.0  # quick tests: the flat budget
    assert search_module.screening_seconds(60.0, 36.0, 2) == pytest.approx(12 * 36.0 / 2)
    budget = Budget.of(600, 60.0, 36.0, 2, deadline=None)
    assert budget.seconds == pytest.approx(216.0) and budget.by_tests and not budget.by_run
    assert budget.spent() == "budget spent: 216s of screening (12 mutants' worth of the failing tests' own time)"
    assert Budget.of(600, 60.0, None, 2, deadline=None).seconds == 60.0  # the user's budget_seconds holds
    cut = Budget.of(600, 60.0, 36.0, 2, deadline=time.monotonic() + 100.0)  # the run's search budget ends sooner
    assert cut.seconds <= 100.0 and cut.by_run
    assert cut.spent() == "budget spent: the run's search budget (--search-budget)"
    assert not Budget.of(600, 60.0, 0.5, 2, deadline=time.monotonic() + 100.0).by_run
