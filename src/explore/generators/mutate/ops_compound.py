"""Operators one step past the catalogue: edits that change two tokens of one expression, or
reshape a value, a loop or a call with what the function already holds. Same contract as
ops_expr: (node, module) → Changes.

They are the search's second tier (operators.py): screened only when no first-tier mutant fixes
a failing test, so they widen what mutate reaches without changing what it finds first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from .edits import Change, Edit, find_operator, replace
from .module import FunctionNode, ModuleInfo
from .ops_expr import LOW_PRECEDENCE, _op_text, _wrap
from .ops_stmt import _copy_text, _insertion_lines, _memo, _next_statement

ORDER_OPS = ("<", "<=", ">", ">=", "==", "!=")
NAMES_LIMIT = 4
NOT_UNWRAPPED = frozenset(
    {
        "range",
        "len",
        "print",
        "isinstance",
        "super",
        "type",
        "id",
        "hash",
        "open",
        "input",
        "iter",
        "next",
        "enumerate",
        "zip",
        "reversed",
        "getattr",
        "hasattr",
        "setattr",
    }
)


def _int_value(node: ast.AST) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_value(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _value_names(node: ast.AST, module: ModuleInfo, line: int) -> list[str]:
    """Parameters and locals bound before `line`, that are values (not functions or classes)."""
    if module.function_of.get(id(node)) is None:
        return []
    return [n for n in module.scope(node).values_at(line) if module.is_value_name(n) and n not in ("self", "cls")]


def compare_constant(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """A comparison and its integer constant changed together (`== 0` → `<= 1`): both halves
    of one boundary, where changing either alone fixes nothing."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return
    source = module.source
    right = node.comparators[0]
    constant = right if _int_value(right) is not None else node.left if _int_value(node.left) is not None else None
    if constant is None:
        return
    value = _int_value(constant)
    assert value is not None
    span = find_operator(source, source.span(node.left)[1], source.span(right)[0])
    op = _op_text(source, span)
    if span is None or op not in ORDER_OPS:
        return
    start, end = source.span(node)
    c_start, c_end = source.span(constant)
    for alternative in (a for a in ORDER_OPS if a != op):
        for new in (value + 1, value - 1):
            if new < 0 <= value:
                continue
            edits = tuple(sorted((Edit(span[0], span[1], alternative), Edit(c_start, c_end, str(new)))))
            text = source.text[start:end]
            for edit in reversed(edits):
                text = text[: edit.start - start] + edit.text + text[edit.end - start :]
            yield Change(edits, source.text[start:end], text)


def _step_site(node: ast.AST, module: ModuleInfo) -> bool:
    """An operand of an arithmetic operation, or a call's argument (not range's: `bound` has those)."""
    parent = module.parent(node)
    if isinstance(parent, ast.BinOp):
        if isinstance(parent.op, (ast.Add, ast.Sub)) and any(
            _int_value(o) is not None for o in (parent.left, parent.right)
        ):
            return False  # `n - 1` → `n + 1 - 1`: the constant operator's ground
        return not isinstance(parent.op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift, ast.MatMult))
    if isinstance(parent, ast.Call) and node in parent.args:
        return not (isinstance(parent.func, ast.Name) and parent.func.id in ("range", "print", "isinstance", "len"))
    return False


def step(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """A `+ 1` / `- 1` dropped from a larger expression (`(n - 1) * 2` → `(n) * 2`), or added to
    an operand or an argument (`2 ** attempt` → `2 ** (attempt - 1)`, `f(n)` → `f(n - 1)`)."""
    if module.function_of.get(id(node)) is None or not isinstance(node, ast.expr):
        return
    source = module.source
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        if _int_value(node.right) == 1:
            yield replace(source, node, _wrap(source, node.left))
        elif isinstance(node.op, ast.Add) and _int_value(node.left) == 1:
            yield replace(source, node, _wrap(source, node.right))
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) or not _step_site(node, module):
        return
    if isinstance(node, ast.Name) and (not isinstance(node.ctx, ast.Load) or not module.is_value_name(node.id)):
        return
    parent = module.parent(node)
    if (
        isinstance(parent, ast.BinOp)
        and isinstance(parent.op, ast.Add)
        and parent.left is node
        and _step_site(parent.right, module)
    ):
        return  # `a - 1 + b` is `a + b - 1`, made at the right operand
    bare = isinstance(parent, ast.Call) or (
        isinstance(parent, ast.BinOp)
        and (isinstance(parent.op, ast.Add) or (isinstance(parent.op, ast.Sub) and parent.left is node))
    )
    text = source.segment(node)
    for delta in (" + 1", " - 1"):
        yield replace(source, node, text + delta if bare else f"({text}{delta})")


def containerise(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """An empty list → `[[]]` (the one empty result); a returned or yielded `[]` → `[v]` for a
    name in scope (`return []` → `return [n]`)."""
    if not isinstance(node, ast.List) or node.elts or not isinstance(node.ctx, ast.Load):
        return
    if module.function_of.get(id(node)) is None:
        return
    yield replace(module.source, node, "[[]]")
    if isinstance(module.parent(node), (ast.Return, ast.Yield)):
        for name in _value_names(node, module, node.lineno)[:NAMES_LIMIT]:
            yield replace(module.source, node, f"[{name}]")


def _loads(tree: ast.AST) -> list[str]:
    """Names a subtree reads, dereferenced ones (`q.pop()`, `q[0]`, `len(q)`) first."""
    derefs, plain = [], []
    for sub in ast.walk(tree):
        if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(sub.value, ast.Name):
            derefs.append(sub.value.id)
        elif (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Name)
            and sub.args
            and isinstance(sub.args[0], ast.Name)
        ):
            derefs.append(sub.args[0].id)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            plain.append(sub.id)
    return list(dict.fromkeys(derefs + plain))


def loop_condition(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`while True:` → `while v:` for a name in scope the loop reads (a queue, a stack, a
    counter): a loop that should end when it runs out."""
    if not isinstance(node, ast.While) or not isinstance(node.test, ast.Constant):
        return
    before = set(_value_names(node, module, node.lineno))
    body = [n for stmt in node.body for n in _loads(stmt) if n in before]
    for name in body[:NAMES_LIMIT]:
        yield replace(module.source, node.test, name)


def _int_like(func: FunctionNode) -> set[str]:
    """Names the function uses as numbers: indices, bounds, counters, operands of integer arithmetic."""
    found: set[str] = set()
    for sub in ast.walk(func):
        if isinstance(sub, ast.Subscript):
            parts = [sub.slice.lower, sub.slice.upper] if isinstance(sub.slice, ast.Slice) else [sub.slice]
            found.update(p.id for p in parts if isinstance(p, ast.Name))
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "range":
            found.update(a.id for a in sub.args if isinstance(a, ast.Name))
        elif isinstance(sub, (ast.BinOp, ast.Compare, ast.AugAssign)):
            operands = (
                [sub.left, sub.right]
                if isinstance(sub, ast.BinOp)
                else [sub.left, *sub.comparators]
                if isinstance(sub, ast.Compare)
                else [sub.target, sub.value]
            )
            if any(_int_value(o) is not None or _is_len(o) for o in operands):
                found.update(o.id for o in operands if isinstance(o, ast.Name))
        elif isinstance(sub, ast.Assign) and (_int_value(sub.value) is not None or _is_len(sub.value)):
            found.update(t.id for t in sub.targets if isinstance(t, ast.Name))
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults):
        if _int_value(default) is not None:
            found.add(arg.arg)
    return found


def _is_len(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"


def slice_iterable(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`for x in xs:` → `for x in xs[1:]` or `xs[k:]` for a number `k` in scope: a loop that
    should start past a prefix."""
    if not isinstance(node, ast.For) or not isinstance(node.iter, (ast.Name, ast.Attribute, ast.Subscript)):
        return
    func = module.function_of.get(id(node))
    if func is None or (isinstance(node.iter, ast.Subscript) and isinstance(node.iter.slice, ast.Slice)):
        return
    own = {n.id for n in ast.walk(node.iter) if isinstance(n, ast.Name)} | {
        n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)
    }
    numbers = _int_like(func)
    names = [n for n in _value_names(node, module, node.lineno) if n in numbers and n not in own]
    for bound in ["1", *names[:NAMES_LIMIT]]:
        yield replace(module.source, node.iter, f"{_wrap(module.source, node.iter)}[{bound}:]")


def unwrap_call(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`f(x)` → `x`: a value passed through a call it should skip (the reverse of wrap_call);
    never a call statement (that would delete it) nor range/len/print and their kind."""
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
        return
    if module.function_of.get(id(node)) is None or isinstance(module.parent(node), ast.Expr):
        return
    if isinstance(node.func, ast.Name) and (node.func.id in NOT_UNWRAPPED or node.func.id[:1].isupper()):
        return
    arg = node.args[0]
    parent = module.parent(node)
    text = module.source.segment(arg)
    needs = isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript, ast.Compare)) and isinstance(
        arg, (*LOW_PRECEDENCE, ast.BinOp)
    )
    yield replace(module.source, node, f"({text})" if needs else text)


def _params(func: FunctionNode) -> list[str]:
    args = func.args
    return [a.arg for a in [*args.posonlyargs, *args.args]]


def recursive_argument(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """In a function's call to itself, one argument changed back to its parameter
    (`f(a[1:], b[1:])` → `f(a[1:], b)`), or changed the way a neighbour is (`f(a[1:], b)` →
    `f(a[1:], b[1:])`)."""
    func = module.function_of.get(id(node))
    if not isinstance(node, ast.Call) or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    callee = node.func
    method = (
        isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) and callee.value.id in ("self", "cls")
    )
    if not (
        (isinstance(callee, ast.Name) and callee.id == func.name)
        or (method and isinstance(callee, ast.Attribute) and callee.attr == func.name)
    ):
        return
    params = _params(func)[1:] if method else _params(func)
    args = node.args
    if any(isinstance(a, ast.Starred) for a in args) or len(args) > len(params):
        return
    source = module.source

    def reads(arg: ast.AST, name: str) -> bool:
        return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(arg))

    for i, arg in enumerate(args):
        if not (isinstance(arg, ast.Name) and arg.id == params[i]) and reads(arg, params[i]):
            yield replace(source, arg, params[i])
    for i, arg in enumerate(args):
        if isinstance(arg, ast.Name) and arg.id == params[i]:
            for j, other in enumerate(args):
                if j != i and not isinstance(other, ast.Name) and reads(other, params[j]):
                    new = _copy_text(source, other, {params[j]: params[i]}, None)  # type: ignore[arg-type]
                    if new != source.segment(arg):
                        yield replace(source, arg, new)


def _call_donors(module: ModuleInfo, node: ast.stmt) -> list[tuple[str, str]]:
    """(receiver, method) of the one-argument method-call statements of the module
    (`seen.add(x)`, `out.append(x)`), the statement's own function first: once per function
    (walking the whole module for every statement cost seconds on real modules)."""
    func = module.function_of.get(id(node))
    return _memo(module, ("call_donors", id(func)), _call_donors_of, module, func)


def _call_donors_of(module: ModuleInfo, func: ast.AST | None) -> list[tuple[str, str]]:
    found: list[tuple[int, str, str]] = []
    for sub in ast.walk(module.source.tree):
        if not (isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call)) or id(sub) in module.excluded:
            continue
        call = sub.value
        if (
            isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and len(call.args) == 1
            and not call.keywords
        ):
            found.append((0 if module.function_of.get(id(sub)) is func else 1, call.func.value.id, call.func.attr))
    return list(dict.fromkeys((base, method) for _, base, method in sorted(found, key=lambda f: f[0])))


def _recent_names(node: ast.stmt, module: ModuleInfo) -> list[str]:
    """Values in scope after the statement, the ones it binds and the loop variables around it
    first, then the latest bound."""
    own = [
        n.id
        for n in ast.walk(node.target if isinstance(node, ast.For) else node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]
    loops: list[str] = []
    parent = module.parent(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.For):
            loops += [n.id for n in ast.walk(parent.target) if isinstance(n, ast.Name)]
        parent = module.parent(parent)
    scope = module.scope(node)
    later = sorted(
        _value_names(node, module, (node.end_lineno or node.lineno) + 1), key=lambda n: -scope.first.get(n, 0)
    )
    return list(dict.fromkeys(own + loops + later))


def insert_call(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Insert after a statement a method call the module makes elsewhere, on a receiver in scope
    here, with another name as its argument (`seen.add(node)`, `lines.append(text)` after the
    loop): bookkeeping written once and forgotten here."""
    lines = _insertion_lines(node, module)
    if lines is None:
        return
    assert isinstance(node, ast.stmt) and node.end_lineno is not None
    source = module.source
    receivers = set(_value_names(node, module, node.end_lineno + 1)) | set(module.module_scope.locals)
    names = _recent_names(node, module)
    indent = source.lines[node.lineno - 1][: node.col_offset]
    following = _next_statement(node, module)
    prefix = "" if source.text[: lines[1]].endswith("\n") else "\n"
    for base, method in [d for d in _call_donors(module, node) if d[0] in receivers][:NAMES_LIMIT]:
        for name in [n for n in names if n != base][:NAMES_LIMIT]:
            text = f"{base}.{method}({name})"
            if text not in (following, source.segment(node)):
                yield Change(
                    (Edit(lines[1], lines[1], f"{prefix}{indent}{text}\n"),), "(nothing)", text, anchor=node.lineno
                )
