"""Expression operators: each takes (node, module) and yields the Changes it makes there.

An operator that does not apply to a node yields nothing; none of them parses or unparses the
file — they edit the exact span of a token or an expression.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from .edits import Change, Edit, Source, find_operator, replace
from .module import ModuleInfo

ORDERING = ["<", "<=", ">", ">="]
COMPARE_ALTERNATIVES: dict[str, list[str]] = {
    "<": ["<=", ">", ">=", "!=", "=="],
    "<=": ["<", ">=", ">", "==", "!="],
    ">": [">=", "<", "<=", "!=", "=="],
    ">=": [">", "<=", "<", "==", "!="],
    "==": ["!=", "<=", ">=", "is"],
    "!=": ["==", "<", ">", "is not"],
    "is": ["is not", "=="],
    "is not": ["is", "!="],
    "in": ["not in"],
    "not in": ["in"],
}
BINOP_ALTERNATIVES: dict[str, list[str]] = {
    "+": ["-", "*"],
    "-": ["+", "*"],
    "*": ["/", "+", "**", "//"],
    "/": ["*", "//"],
    "//": ["/", "%", "*"],
    "%": ["//", "/"],
    "**": ["*"],
    "<<": [">>"],
    ">>": ["<<"],
    "&": ["|", "^"],
    "|": ["&", "^"],
    "^": ["&", "|"],
}
ATTRIBUTE_SWAPS: dict[str, list[str]] = {
    "startswith": ["endswith"],
    "endswith": ["startswith"],
    "lower": ["upper"],
    "upper": ["lower"],
    "lstrip": ["rstrip", "strip"],
    "rstrip": ["lstrip", "strip"],
    "strip": ["lstrip", "rstrip"],
    "keys": ["values", "items"],
    "values": ["keys", "items"],
    "items": ["keys", "values"],
    "append": ["extend"],
    "extend": ["append"],
    "find": ["rfind", "index"],
    "rfind": ["find"],
    "index": ["find"],
    "min": ["max"],
    "max": ["min"],
    "floor": ["ceil"],
    "ceil": ["floor"],
    "split": ["rsplit"],
    "rsplit": ["split"],
    "pop": ["popleft"],
    "popleft": ["pop"],
    "isdigit": ["isalpha", "isalnum"],
    "isalpha": ["isdigit", "isalnum"],
}
FUNCTION_SWAPS: dict[str, list[str]] = {
    "min": ["max"],
    "max": ["min"],
    "any": ["all"],
    "all": ["any"],
    "int": ["round", "float"],
    "round": ["int"],
    "float": ["int"],
    "sorted": ["list"],
}
LOW_PRECEDENCE = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Compare, ast.UnaryOp)


def _token_change(source: Source, node: ast.AST, span: tuple[int, int], new: str) -> Change:
    start, end = source.span(node)
    text = source.text[start:end]
    a, b = span[0] - start, span[1] - start
    return Change((Edit(span[0], span[1], new),), text, text[:a] + new + text[b:])


def _op_text(source: Source, span: tuple[int, int] | None) -> str:
    return " ".join(source.text[span[0] : span[1]].split()) if span else ""


def _wrap(source: Source, node: ast.AST) -> str:
    """The node's text, parenthesised when moving it could change how it binds."""
    text = source.segment(node)
    return f"({text})" if isinstance(node, (*LOW_PRECEDENCE, ast.BinOp, ast.Starred, ast.GeneratorExp)) else text


def comparison(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`<` `<=` `>` `>=` `==` `!=` `is` `is not` `in` `not in`: swap one for a related one."""
    if not isinstance(node, ast.Compare):
        return
    source = module.source
    left = node.left
    for right in node.comparators:
        span = find_operator(source, source.span(left)[1], source.span(right)[0])
        op = _op_text(source, span)
        for alternative in COMPARE_ALTERNATIVES.get(op, []):
            assert span is not None
            yield _token_change(source, node, span, alternative)
        left = right


def arithmetic(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """A binary arithmetic or bitwise operator replaced by a related one."""
    if not isinstance(node, ast.BinOp):
        return
    source = module.source
    span = find_operator(source, source.span(node.left)[1], source.span(node.right)[0])
    for alternative in BINOP_ALTERNATIVES.get(_op_text(source, span), []):
        assert span is not None
        yield _token_change(source, node, span, alternative)


def augmented(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`+=` ↔ `-=` and friends; also plain `=` for an accumulation that should not accumulate."""
    if not isinstance(node, ast.AugAssign):
        return
    source = module.source
    span = find_operator(source, source.span(node.target)[1], source.span(node.value)[0])
    op = _op_text(source, span)
    if not op.endswith("="):
        return
    for alternative in BINOP_ALTERNATIVES.get(op[:-1], []):
        assert span is not None
        yield _token_change(source, node, span, alternative + "=")
    assert span is not None
    yield _token_change(source, node, span, "=")


def boolean(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`and` ↔ `or`, one occurrence at a time."""
    if not isinstance(node, ast.BoolOp):
        return
    source = module.source
    for left, right in zip(node.values, node.values[1:]):
        span = find_operator(source, source.span(left)[1], source.span(right)[0])
        op = _op_text(source, span)
        if op in ("and", "or") and span is not None:
            yield _token_change(source, node, span, "or" if op == "and" else "and")


def _is_condition(node: ast.AST, module: ModuleInfo) -> bool:
    parent = module.parent(node)
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node:
        return True
    if isinstance(parent, ast.comprehension) and node in parent.ifs:
        return True
    return isinstance(parent, ast.BoolOp)


def add_not(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Negate a condition (an `if`/`while` test, a conjunct, a comprehension filter)."""
    if not isinstance(node, ast.expr) or not _is_condition(node, module):
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return
    text = module.source.segment(node)
    new = f"not ({text})" if isinstance(node, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) else f"not {text}"
    yield replace(module.source, node, new)


def remove_not(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Drop a `not`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        text = module.source.segment(node)
        yield replace(module.source, node, text[3:].lstrip())


def constant(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Integer literals ±1; `True` ↔ `False`."""
    if not isinstance(node, ast.Constant):
        return
    value = node.value
    if isinstance(value, bool):
        yield replace(module.source, node, "False" if value else "True")
    elif isinstance(value, int):
        parent = module.parent(node)
        if value == 1 and isinstance(parent, ast.AugAssign) and parent.value is node:
            return  # a counter's step: `n += 2` passes tests by accident far more often than it fixes
        for new in (value + 1, value - 1):
            if new >= 0:
                yield replace(module.source, node, str(new))


def _bound_sites(node: ast.AST, module: ModuleInfo) -> bool:
    parent = module.parent(node)
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id == "range"
        and node in parent.args
    ):
        return True
    if isinstance(parent, ast.Slice) and node in (parent.lower, parent.upper):
        return True
    return isinstance(parent, ast.Subscript) and parent.slice is node


def bound(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """A range bound, slice bound or index that is not a literal: `e` → `e + 1`, `e - 1`."""
    if not isinstance(node, ast.expr) or isinstance(node, (ast.Constant, ast.Slice, ast.Tuple, ast.Starred)):
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return
    if not _bound_sites(node, module):
        return
    text = module.source.segment(node)
    if isinstance(node, (*LOW_PRECEDENCE, ast.BinOp)) and not (
        isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod))
    ):
        text = f"({text})"
    for delta in (" + 1", " - 1"):
        yield replace(module.source, node, text + delta)


def swap_args(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Swap two neighbouring positional arguments of a call."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return
    yield from _swap_pairs(module.source, node, list(zip(node.args, node.args[1:])))


def swap_operands(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Swap the operands of an order-sensitive binary operation (or of `in`)."""
    if isinstance(node, ast.BinOp):
        ordered = isinstance(
            node.op, (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift, ast.MatMult)
        )
        text_add = isinstance(node.op, ast.Add) and any(
            isinstance(o, ast.JoinedStr) or (isinstance(o, ast.Constant) and isinstance(o.value, str))
            for o in (node.left, node.right)
        )
        if ordered or text_add:
            yield from _swap_pairs(module.source, node, [(node.left, node.right)])
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        yield from _swap_pairs(module.source, node, [(node.left, node.comparators[0])])


def _swap_pairs(source: Source, node: ast.AST, pairs: Sequence[tuple[ast.AST, ast.AST]]) -> Iterator[Change]:
    start, end = source.span(node)
    whole = source.text[start:end]
    for a, b in pairs:
        text_a, text_b = source.segment(a), source.segment(b)
        if text_a == text_b:
            continue
        (sa, ea), (sb, eb) = source.span(a), source.span(b)
        new_a, new_b = _wrap(source, b), _wrap(source, a)
        edits = (Edit(sa, ea, new_a), Edit(sb, eb, new_b))
        new_whole = whole[: sa - start] + new_a + whole[ea - start : sb - start] + new_b + whole[eb - start :]
        yield Change(edits, whole, new_whole)


def name(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """A variable, attribute or called function replaced by another of the same role in scope."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        parent = module.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            options = list(FUNCTION_SWAPS.get(node.id, []))
            arity = module.callables.get(node.id)
            if arity is not None and arity >= 0:
                options += [f for f, n in module.callables.items() if n == arity and f != node.id]
        elif module.is_value_name(node.id):
            scope = module.scope(node)
            if node.id in scope.params and scope.loads.get(node.id, 0) <= 1:
                return  # never remove the only use of a parameter
            names = scope.values_at(node.lineno) if module.function_of.get(id(node)) is not None else []
            options = [n for n in names + module.module_scope.locals if n != node.id and module.is_value_name(n)]
        else:
            return
        twins = _operand_names(node, module)
        for option in dict.fromkeys(options[:8]):
            if option not in twins:  # `a - a`, `a == a`: degenerate, never the intended fix
                yield replace(module.source, node, option)
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        parent = module.parent(node)
        called = isinstance(parent, ast.Call) and parent.func is node
        options = list(ATTRIBUTE_SWAPS.get(node.attr, [])) if called else []
        if isinstance(node.value, ast.Name) and not called:
            options += [a for a in module.attrs_by_base.get(node.value.id, []) if a != node.attr]
        source = module.source
        value_end = source.span(node.value)[1]
        start, end = source.span(node)
        dot = source.text.rfind(node.attr, value_end, end)
        if dot < 0:
            return
        for option in dict.fromkeys(o for o in options[:8] if o != node.attr):
            yield _token_change(source, node, (dot, dot + len(node.attr)), option)


def division_guard(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`a / b` → `(a / b if b else 0)`: the common guard against an empty denominator."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
        text = module.source.segment(node)
        yield replace(module.source, node, f"({text} if {_wrap(module.source, node.right)} else 0)")


def _operand_names(node: ast.AST, module: ModuleInfo) -> set[str]:
    """Names that are the other operand of the binary operation, comparison or boolean the node
    belongs to: replacing the node by one of them makes a degenerate expression."""
    parent = module.parent(node)
    if isinstance(parent, ast.BinOp):
        others = [parent.left, parent.right]
    elif isinstance(parent, ast.Compare):
        others = [parent.left, *parent.comparators]
    elif isinstance(parent, ast.BoolOp):
        others = list(parent.values)
    else:
        return set()
    return {o.id for o in others if isinstance(o, ast.Name) and o is not node}
