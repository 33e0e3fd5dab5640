"""Statement operators: delete a statement, swap `break`/`continue`/`return`, return another
value in scope, guard a statement. Same contract as ops_expr: (node, module) → Changes."""

from __future__ import annotations

import ast
import builtins
import itertools
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from ...decide import parsing
from .edits import Change, Edit, Source, replace
from .module import FunctionNode, ModuleInfo

BUILTINS = frozenset(dir(builtins))

DELETABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.Return, ast.Break, ast.Continue)


def _block_of(node: ast.stmt, module: ModuleInfo) -> list[ast.stmt] | None:
    parent = module.parent(node)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is node for s in block):
            return block
    return None


def _whole_lines(source: Source, node: ast.stmt) -> tuple[int, int] | None:
    """The span of the lines the statement occupies, when it is alone on them."""
    start, end = source.span(node)
    line_start = source.starts[node.lineno - 1]
    line_end = source.starts[node.end_lineno or node.lineno]
    if source.text[line_start:start].strip():
        return None
    rest = source.text[end:line_end].strip()
    if rest and not rest.startswith("#"):
        return None
    return line_start, line_end


def delete_statement(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Delete a statement inside a function (`pass` when it is the only one of its block)."""
    if not isinstance(node, DELETABLE) or module.function_of.get(id(node)) is None:
        return
    if isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Call, ast.Await, ast.Yield)):
        return
    block = _block_of(node, module)
    if block is None:
        return
    source = module.source
    text = source.segment(node)
    first = text.splitlines()[0] if text else ""
    lines = _whole_lines(source, node)
    if len(block) > 1 and lines is not None:
        yield Change((Edit(lines[0], lines[1], ""),), first, "(deleted)")
    else:
        yield Change(replace(source, node, "pass").edits, first, "pass")


def jump(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`break` ↔ `continue`; a bare `return` inside a loop → `break` / `continue`."""
    if isinstance(node, ast.Break):
        yield replace(module.source, node, "continue")
    elif isinstance(node, ast.Continue):
        yield replace(module.source, node, "break")
    elif isinstance(node, ast.Return) and node.value is None and module.in_loop(node):
        yield replace(module.source, node, "break")
        yield replace(module.source, node, "continue")


def return_value(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`return e` → `return v` for another value in scope (never a constant: that would turn
    the function into one)."""
    if not isinstance(node, ast.Return) or node.value is None or module.function_of.get(id(node)) is None:
        return
    scope = module.scope(node)
    used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    current = module.source.segment(node.value)
    for option in scope.values_at(node.lineno)[:10]:
        if option == current or not module.is_value_name(option):
            continue
        lost = [p for p in scope.params if p in used and scope.loads.get(p, 0) <= 1 and p != option]
        if lost:
            continue  # the returned expression holds the only use of a parameter
        yield replace(module.source, node.value, option)


def _guarded_names(node: ast.stmt) -> list[str]:
    """Names the statement dereferences (attribute, subscript, len/iter): candidates for a guard."""
    found: list[str] = []
    for sub in ast.walk(node):
        target = None
        if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(sub.value, ast.Name):
            target = sub.value.id
        elif (
            (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Name)
                and sub.func.id in ("len", "iter", "sorted", "sum", "max", "min")
            )
            and sub.args
            and isinstance(sub.args[0], ast.Name)
        ):
            target = sub.args[0].id
        if target and target not in ("self", "cls") and target not in found:
            found.append(target)
    return found


def guard(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Wrap a simple statement in `if v is not None:` or `if v:` for a name it dereferences."""
    if (
        not isinstance(node, (ast.Expr, ast.Assign, ast.AugAssign, ast.Return))
        or module.function_of.get(id(node)) is None
    ):
        return
    source = module.source
    lines = _whole_lines(source, node)
    if lines is None or _block_of(node, module) is None:
        return
    body = source.text[lines[0] : lines[1]]
    indent = body[: len(body) - len(body.lstrip())]
    newline = "" if body.endswith("\n") else "\n"
    indented = "".join("    " + line if line.strip() else line for line in body.splitlines(keepends=True))
    local_names = set(module.scope(node).values_at(node.lineno + 1))
    for var in _guarded_names(node)[:3]:
        if var not in local_names:
            continue
        for test in (f"{var} is not None", var):
            text = f"{indent}if {test}:\n{indented}{newline}"
            yield Change((Edit(lines[0], lines[1], text),), body.strip().splitlines()[0], f"if {test}: …")


SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign)


def _donors(node: ast.stmt, module: ModuleInfo) -> list[tuple[ast.stmt, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Simple statements of the same function, then of sibling methods: (donor, its function)."""
    func = module.function_of.get(id(node))
    if func is None or isinstance(func, ast.Lambda):
        return []
    functions = [func]
    owner = module.parent(func)
    if isinstance(owner, ast.ClassDef):
        functions += [f for f in owner.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f is not func]
    out: list[tuple[ast.stmt, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for f in functions:
        for sub in ast.walk(f):
            if (
                isinstance(sub, SIMPLE)
                and module.function_of.get(id(sub)) is f
                and id(sub) not in module.excluded
                and (not isinstance(sub, ast.Expr) or isinstance(sub.value, ast.Call))
            ):
                out.append((sub, f))
    return out


T = TypeVar("T")
_MEMO: weakref.WeakKeyDictionary[ModuleInfo, dict[Any, Any]] = weakref.WeakKeyDictionary()
"""Per module: what insert_statement works out per function or donor, not per statement (every
statement of a function has the same donors; ranking the lines of a big function redid it for
each, and walked the whole function once per donor: seconds per iteration on real modules)."""


def _memo(module: ModuleInfo, key: tuple[Any, ...], make: Callable[..., T], *args: Any) -> T:
    """make(*args), once per module and key (keys name nodes by id: they live as long as the module)."""
    memo = _MEMO.get(module)
    if memo is None:
        memo = _MEMO[module] = {}
    if key not in memo:
        memo[key] = make(*args)
    return cast(T, memo[key])


def _pairs(tree: ast.AST) -> list[tuple[str, str]]:
    found = []
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name):
            index = sub.slice.lower if isinstance(sub.slice, ast.Slice) else sub.slice
            if isinstance(index, ast.Name):
                found.append((sub.value.id, index.id))
    return found


def _distinct_pairs(tree: ast.AST) -> list[tuple[str, str]]:
    return list(dict.fromkeys(_pairs(tree)))


def _analogues(donor: ast.stmt, func: ast.AST, module: ModuleInfo) -> list[dict[str, str]]:
    """Renamings by analogy: `left[i]` in the donor and `right[j]` elsewhere in the function
    suggest {left: right, i: j} (the two halves of a merge, the x and y of a point)."""
    mine = _pairs(donor)
    theirs = _memo(module, ("pairs", id(func)), _distinct_pairs, func)
    maps: list[dict[str, str]] = []
    for base, index in dict.fromkeys(mine):
        for other_base, other_index in theirs:
            if other_base != base and other_index != index:
                mapping = {base: other_base, index: other_index}
                if mapping not in maps:
                    maps.append(mapping)
    return maps[:3]


def _params(func: FunctionNode) -> list[str]:
    args = func.args
    return [a.arg for a in [*args.posonlyargs, *args.args]]


def _by_position(donor_func: FunctionNode, target_func: FunctionNode) -> dict[str, str]:
    """A sibling method's parameters renamed to the target's, position by position
    (`receive(self, sku, qty)` → `ship(self, item, count)`: {sku: item, qty: count})."""
    return {a: b for a, b in zip(_params(donor_func), _params(target_func)) if a != b}


def _copy_text(source: Source, donor: ast.stmt, mapping: dict[str, str], rename_str: tuple[str, str] | None) -> str:
    start, _ = source.span(donor)
    edits = []
    for sub in ast.walk(donor):
        if isinstance(sub, ast.Name) and sub.id in mapping:
            s, e = source.span(sub)
            edits.append(Edit(s - start, e - start, mapping[sub.id]))
        elif rename_str and isinstance(sub, ast.Constant) and sub.value == rename_str[0]:
            s, e = source.span(sub)
            literal = source.text[s:e]
            edits.append(Edit(s - start, e - start, literal.replace(rename_str[0], rename_str[1])))
    text = source.segment(donor)
    for edit in sorted(edits, reverse=True):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text


def _insertion_lines(node: ast.AST, module: ModuleInfo) -> tuple[int, int] | None:
    """The whole lines of a statement of a function's block, after which a statement may be
    inserted; None for any other node."""
    if not isinstance(node, ast.stmt) or _block_of(node, module) is None or module.function_of.get(id(node)) is None:
        return None
    return _whole_lines(module.source, node)


def insert_statement(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Insert after a statement a copy of another statement of the function (or a sibling
    method, its parameters renamed to this one's), its names renamed by analogy: the fix's
    ingredients are usually already there."""
    lines = _insertion_lines(node, module)
    if lines is None:
        return
    assert isinstance(node, ast.stmt) and node.end_lineno is not None
    target_func = module.function_of[id(node)]
    if not isinstance(target_func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return  # a statement sits in a def (a lambda holds none): no donors
    source = module.source
    indent = source.lines[node.lineno - 1][: node.col_offset]
    scope = module.scope(node)
    visible = (
        set(scope.values_at(node.end_lineno + 1)) | set(module.module_scope.locals) | set(module.callables) | BUILTINS
    )
    seen: set[str] = set()
    following = _next_statement(node, module)
    for donor, func in _memo(module, ("donors", id(target_func)), _donors, node, module):
        rename = (func.name, target_func.name) if func is not target_func else None
        if func is target_func:
            mappings = _memo(module, ("analogues", id(donor)), _analogues, donor, func, module)
        else:
            mappings = [_by_position(func, target_func)]
        for mapping in [{}, *mappings]:
            key = ("copy", id(donor), tuple(sorted(mapping.items())), rename)
            text = _memo(module, key, _copy_text, source, donor, mapping, rename)
            if text in seen or "\n" in text or text == source.segment(node) or text == following:
                continue
            names = _memo(module, ("loads", text), _loaded_names, text)
            if not names <= visible:
                continue
            seen.add(text)
            prefix = "" if source.text[: lines[1]].endswith("\n") else "\n"
            yield Change(
                (Edit(lines[1], lines[1], f"{prefix}{indent}{text}\n"),), "(nothing)", text, anchor=node.lineno
            )


def _loaded_names(text: str) -> set[str]:
    return {n.id for n in ast.walk(parsing.parse(text)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _next_statement(node: ast.stmt, module: ModuleInfo) -> str | None:
    block = _block_of(node, module) or []
    for a, b in itertools.pairwise(block):
        if a is node:
            return module.source.segment(b)
    return None


SENTINELS = ("None", "-1", "0", "False", "[]", '""')


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Set)):
        return not getattr(node, "elts", None) and not getattr(node, "keys", None)
    return isinstance(node, ast.Constant)


def _returns(tree: ast.AST, module: ModuleInfo, func: ast.AST | None) -> list[ast.Return]:
    """Return statements with a value, of one function (or of the whole file when func is None)."""
    return [
        r
        for r in ast.walk(tree)
        if isinstance(r, ast.Return) and r.value is not None and (func is None or module.function_of.get(id(r)) is func)
    ]


def return_literal(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`return -1` → an expression another `return` of the function gives; and the reverse,
    `return e` → a literal (one the file returns elsewhere, or a usual sentinel) when the
    function has other returns (so it never becomes a constant)."""
    if not isinstance(node, ast.Return) or node.value is None:
        return
    func = module.function_of.get(id(node))
    if func is None:
        return
    source = module.source
    current = source.segment(node.value)
    siblings = [r for r in _returns(func, module, func) if r is not node]
    if _is_literal(node.value):
        expressions = [source.segment(r.value) for r in siblings if not _is_literal(r.value)]  # type: ignore[arg-type]
        for option in [e for e in dict.fromkeys(expressions) if "\n" not in e][:4]:
            yield replace(source, node.value, option)
    elif siblings:
        literals = [source.segment(r.value) for r in _returns(source.tree, module, None) if _is_literal(r.value)]  # type: ignore[arg-type]
        for option in [o for o in dict.fromkeys([*literals, *SENTINELS]) if o != current][:6]:
            yield replace(source, node.value, option)


def accumulate(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """`total = x` inside a loop → `total += x` / `total -= x`: an accumulation that overwrites."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not module.in_loop(node):
        return
    target = node.targets[0]
    if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)) or module.function_of.get(id(node)) is None:
        return
    target_text = module.source.segment(target)
    if any(module.source.segment(sub) == target_text for sub in ast.walk(node.value) if isinstance(sub, type(target))):
        return  # `x = x + 1`: already an accumulation
    if _is_literal(node.value) and not (isinstance(node.value, ast.Constant) and node.value.value):
        return  # `buf += []`, `n += 0`: a deletion in disguise (delete_statement makes the honest one)
    if isinstance(target, ast.Name) and target.id not in module.scope(node).values_at(node.lineno):
        return  # first binding: nothing to accumulate into
    source = module.source
    target_end = source.span(target)[1]
    at = target_end + source.text[target_end : source.span(node.value)[0]].index("=")
    start, end = source.span(node)
    text = source.text[start:end]
    for op in ("+=", "-="):
        yield Change((Edit(at, at + 1, op),), text, text[: at - start] + op + text[at - start + 1 :])
