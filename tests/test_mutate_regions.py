"""Checking a mutant on the regions it touches gives the whole-module answers: same parse
verdict, same duplicates, same dropped parameters — on every mutant of a module with the awkward
cases (repeated statements, several statements on a line, decorators, comments between)."""

from __future__ import annotations

import ast
import itertools

from explore.generators.mutate.edits import Edit, Source, apply_edits
from explore.generators.mutate.module import used_params
from explore.generators.mutate.operators import REGISTRY, mutants_in
from explore.generators.mutate.regions import Regions

MODULE = '''"""Doc."""
import functools

LIMIT = 3
count = 0
count += 1
count += 1
a = 1; b = 2


def bump(n, step=1):
    total = n
    total += step
    total += step
    return total  # trailing comment

# a comment between statements

@functools.lru_cache(maxsize=None)
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


class Box:
    size = 2

    def area(self, w, h):
        if w > LIMIT and h > LIMIT:
            return w * h
        return w + h
'''


def whole_module(text: str, edits: list[Edit]) -> tuple[str, bool] | None:
    """The reference: re-parse and dump the whole mutated module."""
    try:
        tree = ast.parse(apply_edits(text, edits))
    except (SyntaxError, ValueError):
        return None
    before, after = used_params(ast.parse(text)), used_params(tree)
    return ast.dump(tree), any(not used <= after.get(k, frozenset()) for k, used in before.items())


def region_answer(regions: Regions, edits: list[Edit]) -> tuple[object, bool] | None:
    try:
        return regions.mutated(edits)
    except (SyntaxError, ValueError):
        return None


def test_regions_agree_with_the_whole_module_on_every_mutant() -> None:
    source = Source("m.py", MODULE)
    lines = set(range(1, len(MODULE.splitlines()) + 1))
    mutants = list(mutants_in(source, lines, REGISTRY))
    assert len(mutants) > 100
    # Hand-made edits for the cases operators rarely make: deleting one of two equal statements,
    # at the top level and in a function; an edit that breaks the syntax; a line joined to the next;
    # a line added to the end of a function, where the next top-level statement starts.
    extra = [
        [Edit(MODULE.index("count += 1"), MODULE.index("count += 1") + 11, "")],
        [Edit(MODULE.rindex("count += 1"), MODULE.rindex("count += 1") + 11, "")],
        [Edit(MODULE.index("    total += step"), MODULE.index("    total += step") + 18, "")],
        [Edit(MODULE.rindex("    total += step"), MODULE.rindex("    total += step") + 18, "")],
        [Edit(MODULE.index("return lo"), MODULE.index("return lo") + 6, "retur")],
        [Edit(MODULE.index("count += 1") + 10, MODULE.index("count += 1") + 11, "")],
        [Edit(MODULE.index("@functools"), MODULE.index("@functools"), "    total = 0\n")],
        [Edit(MODULE.index("    total += step"), MODULE.index("    total += step"), "    n = 0\n")],
    ]
    cases = [[e for _, e in m.edits] for m in mutants] + extra
    regions = Regions(MODULE)
    reference = [whole_module(MODULE, edits) for edits in cases]
    answers = [region_answer(regions, edits) for edits in cases]
    assert [r is None for r in reference] == [a is None for a in answers]
    valid = [(r, a) for r, a in zip(reference, answers) if r is not None and a is not None]
    assert any(r[1] for r, _ in valid)  # some mutant drops a parameter's only use
    assert [r[1] for r, _ in valid] == [a[1] for _, a in valid]
    same = [(r1[0] == r2[0], a1[0] == a2[0]) for (r1, a1), (r2, a2) in itertools.combinations(valid, 2)]
    assert any(ref for ref, _ in same)  # there are duplicates to find
    assert all(ref == got for ref, got in same)


SCOPES = '''
@decorate(a)
def outer(a, b, c, d=e, *args, f, **kw):
    """a function whose parameters are read in every way a scope can hide them"""
    x = [b for _ in range(3)]
    del c

    @decorate(d)
    def inner(g=f, *, h):
        return lambda: h

    class Box:
        size = args

        def method(self, cls, m):
            return m

    return inner, Box, (lambda f: f)


async def waits(self, p, q):
    async def nested():
        return q

    return await nested()
'''


def read_by_scope(tree: ast.AST) -> dict[tuple[int, str], frozenset[str]]:
    """The definition used_params keeps: each function's parameters its own body loads
    (`ModuleInfo`'s scopes), functions in ast.walk's order."""
    from explore.generators.mutate.module import _scope_of

    out = {}
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for index, func in enumerate(functions):
        scope = _scope_of(func)
        out[(index, func.name)] = frozenset(p for p in scope.params if scope.loads.get(p) and p not in ("self", "cls"))
    return out


def test_the_parameters_each_function_reads_are_its_scopes_loads_in_one_pass() -> None:
    """used_params runs for every mutant on the whole statement it touches, in one pass: it must
    say what the scopes say, where nested functions, classes, lambdas, decorators and defaults
    hide a read (c only deleted, d and f read only outside their function's body, h only in a
    lambda)."""
    tree = ast.parse(SCOPES)
    found = used_params(tree)
    assert found == read_by_scope(tree)
    assert found == {
        (0, "outer"): frozenset({"b", "c"}),
        (1, "waits"): frozenset(),
        (2, "inner"): frozenset(),
        (3, "nested"): frozenset(),  # waits' q is read only in here
        (4, "method"): frozenset({"m"}),
    }
    for statement in ast.parse(MODULE).body:
        assert used_params(statement) == read_by_scope(statement)
