"""A module cut into regions at its top-level statements, so a mutant is checked by re-parsing
only the regions its edits touch: whether it parses, which parameters its functions still read,
and a key equal for two mutants whose whole modules have equal ASTs (formatting aside) — the same
answers as re-parsing and dumping the whole module, at the cost of the touched region."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Sequence

from ...decide import parsing
from .edits import Edit, apply_edits
from .module import used_params

Key = tuple[int, int, tuple[str, ...]] | tuple[str]
SAME: Key = ("same",)


def _first_line(stmt: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno, *(d.lineno for d in decorators)])


class Regions:
    """Region k is text[bounds[k]:bounds[k + 1]]: whole lines from a top-level statement's first
    line (decorators included) to the next one's; it holds statements stmts[k][0]:stmts[k][1]."""

    def __init__(self, text: str) -> None:
        self.text = text
        body = parsing.parse(text).body
        line_starts = [0]
        for line in text.splitlines(keepends=True):
            line_starts.append(line_starts[-1] + len(line))
        self.bounds = [0]
        self.stmts: list[tuple[int, int]] = []
        first = 0
        for index, stmt in enumerate(body[1:], start=1):
            start = line_starts[_first_line(stmt) - 1]
            if start > self.bounds[-1]:
                self.bounds.append(start)
                self.stmts.append((first, index))
                first = index
        self.bounds.append(len(text))
        self.stmts.append((first, len(body)))
        self.dumps = [ast.dump(s) for s in body]
        self._params: dict[tuple[int, int], dict[tuple[int, str], frozenset[str]]] = {}

    def region_of(self, offset: int) -> int:
        return min(max(bisect.bisect_right(self.bounds, offset) - 1, 0), len(self.stmts) - 1)

    def mutated(self, edits: Sequence[Edit]) -> tuple[Key, bool]:
        """(structure key, drops a parameter's only use) of the module with `edits` applied;
        raises SyntaxError/ValueError when it does not parse. An edit at a region's very start
        (a line inserted after the previous statement) reaches back into the previous region."""
        lo = self.region_of(max(min(e.start for e in edits) - 1, 0))
        hi = self.region_of(max(max(e.end - 1, e.start) for e in edits))
        start, end = self.bounds[lo], self.bounds[hi + 1]
        new_text = apply_edits(self.text[start:end], [Edit(e.start - start, e.end - start, e.text) for e in edits])
        if end < len(self.text) and not new_text.endswith("\n"):  # the next statement would join its last line
            parsing.parse(apply_edits(self.text, list(edits)))
        tree = parsing.parse(new_text)
        first, last = self.stmts[lo][0], self.stmts[hi][1]
        key = self._key(first, last, [ast.dump(s) for s in tree.body])
        if key == SAME:
            return key, False
        before = self._params.get((lo, hi))
        if before is None:
            before = self._params[(lo, hi)] = used_params(parsing.parse(self.text[start:end]))
        after = used_params(tree)
        return key, any(not used <= after.get(k, frozenset()) for k, used in before.items())

    def _key(self, lo: int, b: int, new: list[str]) -> Key:
        """The module's statements are dumps[:lo] + new + dumps[b:]: key them by the longest
        prefix and then suffix they share with the original and what is left between."""
        old = self.dumps
        size = lo + len(new) + len(old) - b

        def at(i: int) -> str:
            return old[i] if i < lo else new[i - lo] if i < lo + len(new) else old[i - lo - len(new) + b]

        limit = min(size, len(old))
        p = lo
        while p < limit and at(p) == old[p]:
            p += 1
        if p == size == len(old):
            return SAME
        s = 0
        while s < limit - p and at(size - 1 - s) == old[len(old) - 1 - s]:
            s += 1
        return (p, len(old) - s, tuple(at(i) for i in range(p, size - s)))
