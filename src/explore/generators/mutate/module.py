"""What operators need to know about a module: parents, enclosing functions, names in scope.

Built once per file so that every operator is a small function of (node, module).
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass, field

from .edits import Source

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class Scope:
    """Names a function can see, in order of first appearance (params first)."""

    params: list[str] = field(default_factory=list)
    locals: list[str] = field(default_factory=list)
    loads: dict[str, int] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)
    """Local → line of its first binding."""

    @property
    def values(self) -> list[str]:
        return self.params + [n for n in self.locals if n not in self.params]

    def values_at(self, line: int) -> list[str]:
        """Parameters and the locals already bound by this line (a later one would be unbound)."""
        return self.params + [n for n in self.locals if n not in self.params and self.first.get(n, 0) < line]


class ModuleInfo:
    """Parents, enclosing function and scope of each node; nodes operators must leave alone."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.parents: dict[int, ast.AST] = {}
        self.function_of: dict[int, FunctionNode | None] = {}
        self.excluded: set[int] = set()
        self.scopes: dict[int, Scope] = {}
        self.module_scope = Scope()
        self.callables: dict[str, int] = {}
        """Module-level functions and classes → number of positional parameters."""
        self.attrs_by_base: dict[str, list[str]] = {}
        """`self` → ['width', 'height', …]: attributes read from the same base in this file."""
        self.loop_depth: dict[int, bool] = {}
        self._visit(source.tree, None, False)
        self._collect_module_names()

    # --- queries -------------------------------------------------------------------------
    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def scope(self, node: ast.AST) -> Scope:
        func = self.function_of.get(id(node))
        return self.scopes[id(func)] if func is not None else self.module_scope

    def in_loop(self, node: ast.AST) -> bool:
        return self.loop_depth.get(id(node), False)

    def is_value_name(self, name: str) -> bool:
        return name not in self.callables

    def nodes(self) -> list[ast.AST]:
        """Every node operators may mutate, in source order (deterministic)."""
        found = [n for n in ast.walk(self.source.tree) if id(n) not in self.excluded and hasattr(n, "lineno")]
        return sorted(found, key=lambda n: (n.lineno, n.col_offset, type(n).__name__))  # type: ignore[attr-defined]

    # --- construction ------------------------------------------------------------------
    def _visit(self, node: ast.AST, func: FunctionNode | None, in_loop: bool) -> None:
        self.function_of[id(node)] = func
        self.loop_depth[id(node)] = in_loop
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self.scopes[id(node)] = _scope_of(node)
            self._exclude_signature(node)
            if not isinstance(node, ast.Lambda):
                self._exclude_docstring(node.body)
            body = node.body if isinstance(node.body, list) else [node.body]
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
                inner = node if any(child is b for b in body) else func
                self._visit(child, inner, False if inner is node else in_loop)
            return
        if isinstance(node, (ast.Module, ast.ClassDef)):
            self._exclude_docstring(node.body)
        if isinstance(node, ast.JoinedStr):  # positions inside f-strings are unreliable before 3.12
            self._exclude(node)
            return
        if isinstance(node, ast.AnnAssign):
            self._exclude(node.annotation)
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            loop_body = isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and name == "body"
            for child in children:
                if isinstance(child, ast.AST):
                    self.parents[id(child)] = node
                    self._visit(child, func, in_loop or loop_body)

    def _exclude(self, node: ast.AST) -> None:
        for sub in ast.walk(node):
            self.excluded.add(id(sub))

    def _exclude_docstring(self, body: list[ast.stmt]) -> None:
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            self._exclude(body[0])

    def _exclude_signature(self, node: FunctionNode) -> None:
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None and arg.annotation is not None:
                self._exclude(arg.annotation)
        if not isinstance(node, ast.Lambda):
            if node.returns is not None:
                self._exclude(node.returns)
            for decorator in node.decorator_list:
                self._exclude(decorator)

    def _collect_module_names(self) -> None:
        tree = self.source.tree
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.callables[stmt.name] = len(stmt.args.posonlyargs) + len(stmt.args.args)
            elif isinstance(stmt, ast.ClassDef):
                self.callables[stmt.name] = -1
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    self.callables[(alias.asname or alias.name).split(".")[0]] = -1
        for stmt in tree.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    for sub in ast.walk(target):
                        if (
                            isinstance(sub, ast.Name)
                            and sub.id not in self.module_scope.locals
                            and sub.id not in self.callables
                        ):
                            self.module_scope.locals.append(sub.id)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                names = self.attrs_by_base.setdefault(node.value.id, [])
                if node.attr not in names:
                    names.append(node.attr)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads = self.module_scope.loads
                loads[node.id] = loads.get(node.id, 0) + 1


def _scope_of(func: FunctionNode) -> Scope:
    """Parameters, then names bound in the body (not in nested functions), in order of appearance."""
    scope = Scope()
    args = func.args
    for arg in [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]:
        if arg is not None:
            scope.params.append(arg.arg)
    body = func.body if isinstance(func.body, list) else [func.body]
    stack: list[ast.AST] = list(reversed(body))
    found: list[tuple[int, int, str]] = []
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                found.append((node.lineno, node.col_offset, node.id))
            else:
                scope.loads[node.id] = scope.loads.get(node.id, 0) + 1
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.append((node.lineno, node.col_offset, node.name))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if not isinstance(node, ast.Lambda):
                found.append((node.lineno, node.col_offset, node.name))
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    for line, _, name in sorted(found):
        if name not in scope.locals and name not in scope.params:
            scope.locals.append(name)
            scope.first[name] = line
    return scope


def used_params(tree: ast.AST) -> dict[tuple[int, str], frozenset[str]]:
    """(index, function name) → the parameters it reads: a mutant must not drop the only use of one.
    Functions are indexed in `ast.walk`'s order; a function reads what its body loads outside the
    functions, lambdas and classes nested in it (`_scope_of`'s loads). One pass over the tree (it
    runs for every mutant, on the whole top-level statement the mutant touches)."""
    functions: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, set[str]]] = []
    todo: deque[tuple[ast.AST, set[str] | None]] = deque([(tree, None)])
    take, extend, children = todo.popleft, todo.extend, ast.iter_child_nodes
    while todo:  # breadth first, as ast.walk: the same order of functions
        node, reads = take()
        if isinstance(node, ast.Name):  # its only child is its context
            if reads is not None and not isinstance(node.ctx, ast.Store):
                reads.add(node.id)
        elif isinstance(node, ast.Constant):
            pass
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mine: set[str] = set()
            functions.append((node, mine))
            body = {id(statement) for statement in node.body}
            extend((child, mine if id(child) in body else None) for child in children(node))
        elif isinstance(node, (ast.ClassDef, ast.Lambda)):  # neither's body counts for the function around it
            extend((child, None) for child in children(node))
        else:
            extend((child, reads) for child in children(node))
    out: dict[tuple[int, str], frozenset[str]] = {}
    for index, (func, read) in enumerate(functions):
        args = func.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg) if a]
        out[(index, func.name)] = frozenset(p for p in params if p in read and p not in ("self", "cls"))
    return out
