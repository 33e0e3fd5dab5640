"""Operators that draw on what the rest of the file uses: wrap a value in a call made
elsewhere, use a sibling attribute, swap two indices or the operands of a commutative-looking
operation. Same contract as ops_expr: (node, module) → Changes."""

from __future__ import annotations

import ast
import builtins
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field

from .edits import Change, Edit, Source, replace
from .module import ModuleInfo
from .ops_expr import LOW_PRECEDENCE, _swap_pairs, _token_change

BUILTINS = frozenset(dir(builtins))
WRAP_SITES = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Call, ast.keyword, ast.Compare)
WRAP_LIMIT = 3
NOT_WRAPPERS = frozenset(
    {
        "range",
        "print",
        "iter",
        "next",
        "enumerate",
        "zip",
        "isinstance",
        "type",
        "id",
        "hash",
        "callable",
        "vars",
        "dir",
        "open",
        "input",
        "super",
        "exit",
        "repr",
        "getattr",
        "hasattr",
    }
)


@dataclass
class FileIndex:
    """What the file calls and reads, built once per module."""

    unary_callees: dict[int, list[str]] = field(default_factory=dict)
    """id(function) (0 for module level) → names called with exactly one positional argument there."""
    attrs_by_base: dict[str, list[str]] = field(default_factory=dict)
    """Base text (`self.box`, `items[0]`, `a`) → attributes read from it, in order."""
    methods: dict[str, set[int]] = field(default_factory=dict)
    """Method name → numbers of positional arguments it is called with in the file."""


_INDEX: weakref.WeakKeyDictionary[ModuleInfo, FileIndex] = weakref.WeakKeyDictionary()


def index_of(module: ModuleInfo) -> FileIndex:
    found = _INDEX.get(module)
    if found is not None:
        return found
    index = FileIndex()
    for node in ast.walk(module.source.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords:
            func = module.function_of.get(id(node))
            names = index.unary_callees.setdefault(id(func) if func is not None else 0, [])
            if node.func.id not in names:
                names.append(node.func.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            index.methods.setdefault(node.func.attr, set()).add(len(node.args))
        elif isinstance(node, ast.Attribute) and not (
            isinstance(parent := module.parent(node), ast.Call) and parent.func is node
        ):
            attrs = index.attrs_by_base.setdefault(ast.unparse(node.value), [])
            if node.attr not in attrs:
                attrs.append(node.attr)
    _INDEX[module] = index
    return index


def _value_site(node: ast.AST, module: ModuleInfo) -> bool:
    """A value that is assigned, returned, passed or compared (not a call's function, not a target)."""
    parent = module.parent(node)
    if not isinstance(parent, WRAP_SITES):
        return False
    if isinstance(parent, ast.Call):
        return node in parent.args
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.keyword)):
        return parent.value is node
    return True


def wrap_call(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`x` → `f(x)` for a function or builtin the enclosing function calls with one argument,
    or a one-parameter function of the module; `a - b` → `max(0, a - b)`."""
    if not isinstance(node, ast.expr) or module.function_of.get(id(node)) is None or not _value_site(node, module):
        return
    source = module.source
    text = source.segment(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        yield replace(source, node, f"max(0, {text})")
        return
    if isinstance(node, ast.Name):
        if not isinstance(node.ctx, ast.Load) or not module.is_value_name(node.id):
            return
    elif not isinstance(node, (ast.Attribute, ast.Subscript)):
        return
    func = module.function_of[id(node)]
    index = index_of(module)
    own = getattr(func, "name", None)
    scope = module.scope(node)
    visible = set(scope.values_at(node.lineno + 1)) | set(module.module_scope.locals) | set(module.callables) | BUILTINS
    one_param = [f for f, n in module.callables.items() if n == 1]
    parent = module.parent(node)
    outer = parent.func.id if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) else None
    options = [*index.unary_callees.get(id(func), []), *one_param]
    chosen = [
        f
        for f in dict.fromkeys(options)
        if f in visible
        and f not in (own, outer)
        and f != text
        and f not in NOT_WRAPPERS
        and not f[:1].isupper()  # classes, exceptions
    ][:WRAP_LIMIT]
    for callee in chosen:
        yield replace(source, node, f"{callee}({text})")


def sibling_attribute(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`b.start` → `b.end` when `start` and `end` are read together from some object in the
    file (the `name` operator covers attributes read from this very base); a method call →
    another method the file calls with as many arguments."""
    if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load):
        return
    source = module.source
    index = index_of(module)
    parent = module.parent(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        arity = len(parent.args)
        options = [m for m, counts in index.methods.items() if arity in counts and m != node.attr]
    else:
        covered = set(module.attrs_by_base.get(node.value.id, [])) if isinstance(node.value, ast.Name) else set()
        options = []
        for attrs in index.attrs_by_base.values():
            if node.attr in attrs:
                options += [a for a in attrs if a not in covered and a not in options and a != node.attr]
    value_end = source.span(node.value)[1]
    start, end = source.span(node)
    at = source.text.rfind(node.attr, value_end, end)
    if at < 0:
        return
    for option in options[:6]:
        yield _token_change(source, node, (at, at + len(node.attr)), option)


def swap_subscripts(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`m[i][j]` → `m[j][i]`; `m[i, j]` → `m[j, i]`."""
    if not isinstance(node, ast.Subscript) or isinstance(node.slice, ast.Slice):
        return
    source = module.source
    if isinstance(node.value, ast.Subscript) and not isinstance(node.value.slice, ast.Slice):
        yield from _swap_pairs(source, node, [(node.value.slice, node.slice)])
    elif isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2:
        yield from _swap_pairs(source, node, [(node.slice.elts[0], node.slice.elts[1])])


def _numeric(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float, complex))
        and not isinstance(node.value, bool)
    )


def swap_commutative(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Swap the operands of `+` `*` `|` `&` (order matters for strings, lists and sets: `out + d`
    for `d + out`) and neighbouring operands of `and` / `or` (short-circuit order: the guard
    first). Operations on a number literal are left alone."""
    source = module.source
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult, ast.BitOr, ast.BitAnd)):
        if _numeric(node.left) or _numeric(node.right):
            return
        if isinstance(node.op, ast.Add) and any(
            isinstance(o, ast.JoinedStr) or (isinstance(o, ast.Constant) and isinstance(o.value, str))
            for o in (node.left, node.right)
        ):
            return  # swap_operands already makes this one
        yield from _swap_pairs(source, node, [(node.left, node.right)])
    elif isinstance(node, ast.BoolOp):
        yield from _swap_pairs(source, node, list(zip(node.values, node.values[1:])))


def swap_keywords(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Swap two positional arguments that are not neighbours, or the values of two keyword arguments."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return
    far = [(a, b) for i, a in enumerate(node.args) for b in node.args[i + 2 :]]
    values = [k.value for k in node.keywords if k.arg is not None]
    pairs = far + [(a, b) for i, a in enumerate(values) for b in values[i + 1 :]]
    yield from _swap_pairs(module.source, node, pairs[:6])


def _guard_text(source: Source, node: ast.expr) -> str:
    text = source.segment(node)
    return (
        f"({text})" if isinstance(node, LOW_PRECEDENCE) and not isinstance(node, (ast.Compare, ast.UnaryOp)) else text
    )


def _dereferenced(test: ast.expr, module: ModuleInfo) -> tuple[list[str], set[str], list[tuple[str, str]]]:
    """Names the condition reads (dereferenced ones first), which of them it dereferences, and
    (index, sequence) pairs of `seq[i]`."""
    derefs: list[str] = []
    plain: list[str] = []
    bounds: list[tuple[str, str]] = []
    for sub in ast.walk(test):
        if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(sub.value, ast.Name):
            derefs.append(sub.value.id)
            if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Name):
                bounds.append((sub.slice.id, sub.value.id))
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and isinstance(sub.func.value, ast.Name):
            derefs.append(sub.func.value.id)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            plain.append(sub.id)
    names = [
        n
        for n in dict.fromkeys(derefs + plain)
        if n not in ("self", "cls") and module.is_value_name(n) and n not in BUILTINS
    ]
    return names, set(derefs), list(dict.fromkeys(bounds))


def add_condition(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """A guard conjunct or disjunct put before a condition, built from the names it reads: a
    None check, an emptiness check, a bound check (`stack[-1] == c` → `stack and stack[-1] == c`;
    before an early exit the disjunct first: `not stack or stack.pop() != c`)."""
    parent = module.parent(node)
    is_test = isinstance(parent, (ast.If, ast.While, ast.IfExp)) and parent.test is node
    is_test = is_test or (isinstance(parent, ast.comprehension) and node in parent.ifs)
    if not is_test or not isinstance(node, ast.expr) or module.function_of.get(id(node)) is None:
        return
    source = module.source
    names, derefs, bounds = _dereferenced(node, module)
    visible = set(module.scope(node).values_at(node.lineno + 1)) | set(module.module_scope.locals)
    text = _guard_text(source, node)
    start, end = source.span(node)
    exits = isinstance(parent, ast.If) and isinstance(parent.body[0], (ast.Return, ast.Raise, ast.Continue, ast.Break))
    guards = [f"{index} < len({seq}) and " for index, seq in bounds[:2] if index in visible and seq in visible]
    for var in [n for n in names if n in visible][:3]:
        conjuncts = [f"{var} and ", f"{var} is not None and "] if var in derefs else [f"{var} is not None and "]
        disjuncts = [f"not {var} or ", f"{var} is None or "] if var in derefs else [f"{var} is None or "]
        # a test that leads to an early exit takes the exit when it cannot look: `if not xs or xs[0] …: return`
        guards += [*disjuncts, *conjuncts] if exits else [*conjuncts, *disjuncts]
    for guard in guards:
        yield Change((Edit(start, end, guard + text),), source.segment(node), guard + text)
