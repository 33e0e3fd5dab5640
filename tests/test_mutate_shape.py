"""Each strategy's shaping rule, on scripted screened mutants (no processes)."""

from __future__ import annotations

from pathlib import Path

from explore.generators.mutate import shape
from explore.generators.mutate.edits import Edit, Mutant
from explore.generators.mutate.localise import IMPORT_TIME, Spectrum, Suspect
from explore.generators.mutate.prepared import Prepared
from explore.generators.mutate.screen import Verdict
from explore.generators.mutate.search import Search

FAILING = frozenset({"t1", "t2"})


def item(
    line: int,
    fixed: set[str],
    *,
    family: str = "comparison",
    old: str = "<",
    new: str = "<=",
    broken: bool = False,
    score: float = 1.0,
    parts: tuple[Mutant, ...] = (),
) -> Prepared:
    """A screened mutant at m.py:line fixing `fixed` of the failing tests (and breaking one passing test if `broken`)."""
    edits = tuple(e for p in parts for e in p.edits) or (("m.py", Edit(line * 100, line * 100 + len(old), new)),)
    mutant = Mutant("m.py", line, 0, "op", family if not parts else "combination", 1.0, old, new, True, edits, parts)
    outcomes = {t: ("passed" if t in fixed else "failed") for t in FAILING} | {"p1": "failed" if broken else "passed"}
    return Prepared(mutant, score, f"patch {line} {new}", sorted(FAILING), ["p1"], {}, Verdict("ok", outcomes))


def combo(a: Prepared, b: Prepared) -> Prepared:
    return item(a.mutant.line, set(a.fixed) | set(b.fixed), parts=(a.mutant, b.mutant), score=a.score + b.score)


def test_aggressive_puts_the_combination_of_partial_fixes_first() -> None:
    a, b = item(3, {"t1"}), item(9, {"t2"})
    chosen = shape.choose("batched", 3, [a, b], [combo(a, b)])
    assert [c.mutant.lines for c in chosen] == [(("m.py", 3), ("m.py", 9)), (("m.py", 3),), (("m.py", 9),)]
    assert shape.is_full(chosen[0], FAILING)


def test_aggressive_keeps_a_combination_only_when_it_fixes_more_than_any_single() -> None:
    full, a, b = item(5, {"t1", "t2"}), item(3, {"t1"}), item(9, {"t2"})
    chosen = shape.choose("batched", 2, [a, full, b], [combo(a, b)])
    assert chosen[0] is full


def test_aggressive_search_stops_once_partial_fixes_cover_every_failing_test() -> None:
    enough = shape.stop_rule("batched", 3, FAILING, patience=1000)
    conservative = shape.stop_rule("variations", 3, FAILING, patience=1000)
    assert not enough([item(3, {"t1"}), item(4, {"t1"})])
    assert not enough([item(3, {"t1"}), item(3, {"t2"}, new=">")])  # one line: nothing to batch
    assert enough([item(3, {"t1"}), item(9, {"t2"})])
    assert not conservative([item(3, {"t1"}), item(9, {"t2"})])


def test_exploratory_never_gives_three_variations_of_one_line() -> None:
    same_line = [
        item(3, {"t1", "t2"}, family=f, new=n) for f, n in (("comparison", "<="), ("constant", "1"), ("name", "y"))
    ]
    chosen = shape.choose("distinct", 3, same_line, [])
    assert len(chosen) == 2 and len({c.mutant.family for c in chosen}) == 2


def test_exploratory_prefers_distinct_lines_and_distinct_families() -> None:
    singles = [
        item(3, {"t1", "t2"}, new="<="),
        item(3, {"t1", "t2"}, new=">"),
        item(4, {"t1"}, family="comparison"),
        item(7, {"t1"}, family="constant", new="2"),
    ]
    chosen = shape.choose("distinct", 3, singles, [])
    assert [c.mutant.line for c in chosen] == [3, 7, 4]  # line 7's new family before line 4's repeated one
    assert len({c.mutant.line for c in chosen}) == 3


def test_exploratory_adds_a_combination_only_at_a_new_line() -> None:
    a, b = item(3, {"t1"}), item(9, {"t2"})
    assert shape.choose("distinct", 3, [a], [combo(a, b)])[1].mutant.parts
    assert len(shape.choose("distinct", 3, [a, b], [combo(a, b)])) == 2


def test_conservative_gives_the_best_ranked_single_fixes_before_any_combination() -> None:
    a, b, full = item(3, {"t1"}), item(9, {"t2"}), item(5, {"t1", "t2"}, score=0.1)
    chosen = shape.choose("variations", 3, [a, b, full], [combo(a, b)])
    assert chosen[0] is full and all(not c.mutant.parts for c in chosen)


def test_surgical_takes_the_smallest_edit_among_equally_good_fixes() -> None:
    big = item(3, {"t1", "t2"}, old="a + b", new="a - b - 1")
    small = item(4, {"t1", "t2"}, old="<", new="<=")
    partial = item(5, {"t1"}, old="<", new=">")
    assert shape.choose("minimal", 3, [big, partial, small], []) == [small, big, partial]


def test_no_shape_proposes_a_mutant_that_breaks_a_passing_test() -> None:
    trap, honest = item(3, {"t1", "t2"}, broken=True), item(8, {"t1", "t2"}, score=0.2)
    for name in ("variations", "distinct", "batched", "minimal"):
        assert shape.choose(name, 3, [trap, honest], []) == [honest]


def test_partial_fixes_alone_do_not_settle_before_the_statement_edits_at_lines_every_failing_test_runs() -> None:
    accidental = item(21, {"t1"})  # fixes one test by side effect, at a line only that test runs
    misses = [item(line, set(), new=f"v{line}") for line in range(30, 40)]
    insert = item(16, set(), family=shape.STATEMENT, new="result.extend(rest)")  # low prior: ranked last
    elsewhere = item(40, set(), family=shape.STATEMENT, new="x = 0")
    screened = [accidental, *misses, insert]
    ranked = [p.mutant for p in screened]
    enough = shape.stop_rule(
        "variations",
        3,
        FAILING,
        patience=2,
        partial_patience=3,
        statements_done=shape.statements_reached(ranked, {("m.py", 16), ("m.py", 21)}),
    )
    assert not any(enough(screened[:k]) for k in range(1, len(screened)))  # patience alone stops at 4
    assert enough(screened)
    assert shape.stop_rule("variations", 3, FAILING, patience=2, partial_patience=3)(screened[:4])
    at_other_lines = shape.statements_reached([*ranked, elsewhere.mutant], {("m.py", 21)})
    assert at_other_lines(screened[:1]) and at_other_lines([])  # no statement mutant at a shared line: no wait
    with_full = [item(3, {"t1", "t2"}, score=2.0), *misses[:2]]  # ranked above them
    assert shape.stop_rule("variations", 3, FAILING, patience=2, statements_done=lambda prefix: False)(with_full)


def test_shared_lines_are_the_searched_lines_every_failing_test_runs_itself() -> None:
    spectrum = Spectrum(
        {
            ("m.py", 1): frozenset({IMPORT_TIME}),
            ("m.py", 5): frozenset({"t1", "t2", "p1"}),
            ("m.py", 8): frozenset({"t1"}),
        },
        FAILING,
        frozenset({"p1"}),
    )
    suspects = [Suspect((i,), "m.py", line, 1.0) for i, line in enumerate((1, 5, 8))]
    assert Search(Path("."), {}, spectrum, suspects).shared_lines() == {("m.py", 5)}
