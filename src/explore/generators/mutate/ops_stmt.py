"""Statement operators: delete a statement, swap `break`/`continue`/`return`, return another
value in scope, guard a statement. Same contract as ops_expr: (node, module) → Changes."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from .edits import Change, Edit, Source, replace
from .module import ModuleInfo

DELETABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.Return, ast.Break, ast.Continue)


def _block_of(node: ast.stmt, module: ModuleInfo) -> list[ast.stmt] | None:
    parent = module.parent(node)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is node for s in block):
            return block
    return None


def _whole_lines(source: Source, node: ast.AST) -> tuple[int, int] | None:
    """The span of the lines the statement occupies, when it is alone on them."""
    start, end = source.span(node)
    line_start = source.starts[node.lineno - 1]  # type: ignore[attr-defined]
    line_end = source.starts[node.end_lineno]  # type: ignore[attr-defined]
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
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in ("len", "iter", "sorted", "sum", "max", "min"):
            if sub.args and isinstance(sub.args[0], ast.Name):
                target = sub.args[0].id
        if target and target not in ("self", "cls") and target not in found:
            found.append(target)
    return found


def guard(node: ast.AST, module: ModuleInfo) -> Iterator[Change]:
    """Wrap a simple statement in `if v is not None:` or `if v:` for a name it dereferences."""
    if not isinstance(node, (ast.Expr, ast.Assign, ast.AugAssign, ast.Return)) or module.function_of.get(id(node)) is None:
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
