"""The registry of mutation operators, and the mutants they make at the lines worth changing.

Each operator is a small unit (ops_expr, ops_stmt) listed here with its family and prior: the
prior says how often that kind of edit is the fix (changing an operator or a bound before
deleting code), and ranks mutants of equally suspicious lines. An operator that picks its
replacement from what the program holds (another name in scope, another statement of the
function) is one kind of edit however many choices the program offers: its prior is shared by
its choices at one place (`shares`), so that a site with eight names in scope does not screen
eight times the likelihood of one comparison flipped at a less suspicious line. The tier says when the search
tries it: the first tier always, the second (ops_compound: two tokens at once, reshaped values,
loops and calls) only once no first-tier mutant fixes a failing test.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from . import ops_call, ops_compound, ops_expr, ops_stmt
from .edits import Change, Mutant, Source
from .module import ModuleInfo


@dataclass(frozen=True)
class Operator:
    name: str
    family: str
    prior: float
    single_token: bool
    apply: Callable[[ast.AST, ModuleInfo], Iterator[Change]]
    tier: int = 1
    shares: bool = False
    """Its choices come from the program (names, statements, values in scope), not from a fixed
    small set of alternatives: the k choices at one place share its prior (search.py)."""

    @property
    def doc(self) -> str:
        return (self.apply.__doc__ or "").strip().splitlines()[0]


REGISTRY: tuple[Operator, ...] = (
    Operator("comparison", "operator", 1.00, True, ops_expr.comparison),
    Operator("constant", "literal", 0.95, True, ops_expr.constant),
    Operator("arithmetic", "operator", 0.90, True, ops_expr.arithmetic),
    Operator("augmented", "operator", 0.90, True, ops_expr.augmented),
    Operator("boolean", "operator", 0.90, True, ops_expr.boolean),
    Operator("bound", "bound", 0.85, False, ops_expr.bound),
    Operator("remove_not", "condition", 0.85, True, ops_expr.remove_not),
    Operator("add_not", "condition", 0.80, True, ops_expr.add_not),
    Operator("name", "name", 0.70, True, ops_expr.name, shares=True),
    Operator("swap_args", "swap", 0.70, False, ops_expr.swap_args),
    Operator("swap_operands", "swap", 0.65, False, ops_expr.swap_operands),
    Operator("swap_subscripts", "swap", 0.60, False, ops_call.swap_subscripts),
    Operator("sibling_attribute", "name", 0.55, True, ops_call.sibling_attribute, shares=True),
    Operator("accumulate", "operator", 0.55, True, ops_stmt.accumulate),
    Operator("swap_keywords", "swap", 0.50, False, ops_call.swap_keywords),
    Operator("jump", "control", 0.60, True, ops_stmt.jump),
    Operator("return_value", "return", 0.50, False, ops_stmt.return_value, shares=True),
    Operator("return_literal", "return", 0.45, False, ops_stmt.return_literal, shares=True),
    Operator("guard", "guard", 0.45, False, ops_stmt.guard, shares=True),
    Operator("add_condition", "guard", 0.45, False, ops_call.add_condition, shares=True),
    Operator("division_guard", "guard", 0.40, False, ops_expr.division_guard),
    Operator("delete_statement", "statement", 0.40, False, ops_stmt.delete_statement),
    Operator("insert_statement", "statement", 0.35, False, ops_stmt.insert_statement, shares=True),
    Operator("wrap_call", "call", 0.30, False, ops_call.wrap_call, shares=True),
    Operator("swap_commutative", "swap", 0.30, False, ops_call.swap_commutative),
    Operator("compare_constant", "operator", 0.60, False, ops_compound.compare_constant, tier=2),
    Operator("step", "bound", 0.55, False, ops_compound.step, tier=2),
    Operator("recursive_argument", "call", 0.55, False, ops_compound.recursive_argument, tier=2, shares=True),
    Operator("loop_condition", "condition", 0.50, True, ops_compound.loop_condition, tier=2, shares=True),
    Operator("slice_iterable", "bound", 0.50, False, ops_compound.slice_iterable, tier=2, shares=True),
    Operator("unwrap_call", "call", 0.45, False, ops_compound.unwrap_call, tier=2),
    Operator("containerise", "literal", 0.45, False, ops_compound.containerise, tier=2, shares=True),
    Operator("insert_call", "statement", 0.35, False, ops_compound.insert_call, tier=2, shares=True),
)
TIERS = (1, 2)
BY_NAME = {op.name: op for op in REGISTRY}


def get(name: str) -> Operator:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown mutation operator {name!r}: choose one of {', '.join(BY_NAME)}") from None


def mutants_in(
    source: Source, lines: Iterable[int] | None = None, operators: Iterable[Operator] = REGISTRY
) -> list[Mutant]:
    """Every mutant of the registry's operators whose edit starts on one of `lines` (all lines
    when None), in source order."""
    wanted = set(lines) if lines is not None else None
    module = ModuleInfo(source)
    ops = list(operators)
    out: list[Mutant] = []
    for node in module.nodes():
        if wanted is not None and _far(node, wanted):
            continue
        for op in ops:
            for change in op.apply(node, module):
                first = min(change.edits)
                line = change.anchor or source.line_of(first.start)
                if wanted is not None and line not in wanted:
                    continue
                if any(source.text[e.start : e.end] == e.text for e in change.edits) and len(change.edits) == 1:
                    continue  # no-op
                out.append(
                    Mutant(
                        file=source.path,
                        line=line,
                        col=source.col_of(first.start),
                        operator=op.name,
                        family=op.family,
                        prior=op.prior,
                        old=_short(change.old),
                        new=_short(change.new),
                        single_token=op.single_token,
                        edits=tuple((source.path, e) for e in sorted(change.edits)),
                    )
                )
    return out


def _far(node: ast.AST, wanted: set[int]) -> bool:
    """No change at this node can land on a wanted line: changes edit the node's own lines or
    insert right after it (ranking every node of a big module cost seconds)."""
    first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    return first is not None and last is not None and wanted.isdisjoint(range(first, last + 2))


def _short(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
