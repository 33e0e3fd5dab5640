"""Removals judged by their effect — pure: does a change delete a directory tree the program did not
create in that same flow?

A candidate that adds `shutil.rmtree(x)` (or any `rmtree`) is destructive when `x` may be data the
program was given — a parameter, the home or project folder, a path from a setting — and not when
`x` is a temporary or working directory that flow made. Read with `ast` on the changed function of
the file as the candidate left it, each removal call on an added line is judged by the first rule
that holds:

- `created_here`: `x` (or the path it lies under: `os.path.join(x, …)`, `x / "sub"`, `abspath(x)`)
  is a local name of the same function (never one of its parameters, nor a plain alias of one)
  bound from what creates a directory (`tempfile.mkdtemp()`, `TemporaryDirectory()`…: the standard
  library's, as the module imported it) or passed to a call that creates it (`os.makedirs(x)`,
  `x.mkdir()`, `shutil.copytree(src, x)`; not with `exist_ok=True`: it may have been there);
- `created_by_helper`: the same, where the creating call is a helper of the project's that the
  function calls — it returns a directory it created, or creates the one it is given
  (`make_sure_path_exists(x)`), followed through the project's own modules a few calls deep;
- `module_precedent`: the module already removed the same expression with the same remover before
  the change (the fix repeats the cleanup the module already does);
- `not_created`: none of these — the fix may delete what the program was given: destructive.

A removal explore cannot read (a file that does not parse) stays destructive by name, as do the
other destructive rows of escalation.PATTERNS (`rm -rf`, dropped tables, reset databases).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from . import parsing

Rule = Literal["created_here", "created_by_helper", "module_precedent", "not_created"]
RULES: dict[Rule, str] = {
    "created_here": "it removes a directory the same function created",
    "created_by_helper": "it removes a directory a helper the function calls created",
    "module_precedent": "the module already removed the same directory the same way before the change",
    "not_created": "it may remove data the program did not create in that flow",
}
Source = Callable[[str], str | None]
"""A repository path → its text (None: no such file)."""

REMOVERS = frozenset({"rmtree"})
"""Calls that delete a directory tree, by their last name (`shutil.rmtree`, `utils.rmtree`, `rmtree`)."""
MAKES_PATH = frozenset(
    {"tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.TemporaryDirectory", "tempfile.NamedTemporaryFile"}
)
"""Calls whose value is a path (or holder of one) they just created: the standard library's, as
imported (a project function of the same name is judged by its body, as a helper)."""
MAKES_ARG = {"os.makedirs": 0, "os.mkdir": 0, "shutil.copytree": 1}
"""Calls that create the directory their argument names (which argument); with `exist_ok=True`
(as `x.mkdir(exist_ok=True)`) they may find it there already, so they do not count."""
SAME_PLACE = frozenset({"abspath", "normpath", "realpath", "Path", "PurePath", "str", "fspath", "resolve", "absolute"})
"""Calls whose value names the same place as their first argument (or, for a method, its object)."""
DEPTH = 3
"""How many helper calls deep a creation is followed."""


@dataclass(frozen=True)
class Removal:
    """One removal call a change adds, and the rule that judged it."""

    file: str
    line: int
    call: str
    function: str
    rule: Rule
    detail: str

    @property
    def destructive(self) -> bool:
        return self.rule == "not_created"

    def describe(self) -> str:
        return f"`{self.call}` in {self.function} ({self.file}:{self.line}): {RULES[self.rule]} — {self.detail}"


def judge(file: str, before: str | None, after: str, added: set[int], source: Source) -> list[Removal] | None:
    """The removal calls on the added lines of file (its text after the change), each judged; None
    when the file does not parse (the caller judges it by name). source reads the project's other
    modules as the change left them (for helpers); before: the file before the change (None: new)."""
    try:
        tree = parsing.parse(after)
    except (SyntaxError, ValueError):
        return None
    reader = _Reader(file, tree, source)
    found = []
    for call, scope, cls in _calls(tree):
        if _last_name(call.func) not in REMOVERS or not _touches(call, added):
            continue
        target = _first_arg(call, "path")
        text = ast.unparse(call)
        name = scope.name if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else "the module"
        rule, detail = reader.verdict(target, scope, cls)
        if rule == "not_created" and before is not None and _precedent(before, call):
            rule, detail = "module_precedent", f"`{text}` was already there"
        found.append(Removal(file, call.lineno, text, name, rule, detail))
    return found


# ------------------------------------------------------------------ reading the module


Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef


def _calls(tree: ast.Module) -> Iterator[tuple[ast.Call, Scope, ast.ClassDef | None]]:
    """Every call with the innermost function around it (or the module) and its class."""

    def visit(
        node: ast.AST, scope: Scope, cls: ast.ClassDef | None
    ) -> Iterator[tuple[ast.Call, Scope, ast.ClassDef | None]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, child, cls)
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, scope, child)
            else:
                if isinstance(child, ast.Call):
                    yield child, scope, cls
                yield from visit(child, scope, cls)

    yield from visit(tree, tree, None)


def _own_nodes(scope: Scope) -> Iterator[ast.AST]:
    """The nodes of scope's body, not those of functions or classes defined inside it."""
    stack: list[ast.AST] = list(scope.body)
    while stack:
        node = stack.pop()
        yield node
        stack += [
            c
            for c in ast.iter_child_nodes(node)
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
        ]


def _touches(call: ast.Call, added: set[int]) -> bool:
    end = call.end_lineno or call.lineno
    return any(n in added for n in range(call.lineno, end + 1))


def _last_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _first_arg(call: ast.Call, keyword: str) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _exist_ok(call: ast.Call) -> bool:
    """The call may find its directory there already (`exist_ok=` anything but a literal false)."""
    return any(
        k.arg == "exist_ok" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in call.keywords
    )


def imports(tree: ast.Module) -> dict[tuple[str, bool], str]:
    """What the module's imports bind: (name, is a module) → the dotted name it stands for
    (`import tempfile as tf`: ("tf", True) → "tempfile"; `from tempfile import mkdtemp`:
    ("mkdtemp", False) → "tempfile.mkdtemp")."""
    bound: dict[tuple[str, bool], str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[(alias.asname or alias.name, True)] = alias.name
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                bound[(alias.asname or alias.name, False)] = f"{node.module}.{alias.name}"
    return bound


def _qualified(func: ast.expr, bound: dict[tuple[str, bool], str]) -> str:
    """The dotted name a call's function has through the module's imports; "" when it is not one a
    module imported (a project function of the same name is no standard library call)."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = bound.get((func.value.id, True))
        return f"{module}.{func.attr}" if module else ""
    if isinstance(func, ast.Name):
        return bound.get((func.id, False), "")
    return ""


def root(expr: ast.expr | None) -> str | None:
    """The name (or `self.attr`) of the directory expr lies in: through path joins, `/`, and calls
    that name the same place; None when it is anything else."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        if isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return f"self.{expr.attr}"
        if expr.attr == "name":  # TemporaryDirectory().name, NamedTemporaryFile().name
            return root(expr.value)
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return root(expr.left)
    if isinstance(expr, ast.Call):
        name = _last_name(expr.func)
        if name == "join" or name in SAME_PLACE:
            if isinstance(expr.func, ast.Attribute) and name in ("resolve", "absolute") and not expr.args:
                return root(expr.func.value)
            return root(expr.args[0]) if expr.args else None
    return None


def _descends(expr: ast.expr) -> bool:
    """expr names a place below its root (a join with a second part, `/`), not the root itself."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return True
    if isinstance(expr, ast.Call):
        if _last_name(expr.func) == "join" and len(expr.args) > 1:
            return True
        return bool(expr.args) and _descends(expr.args[0])
    return False


def _bound(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        yield f"self.{target.attr}"
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound(element)


def _params(scope: Scope) -> set[str]:
    if isinstance(scope, ast.Module):
        return set()
    a = scope.args
    names = [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return set(names) - {"self", "cls"}


def _precedent(before: str, call: ast.Call) -> bool:
    """The module before the change made the same call: the same remover on the same expression."""
    try:
        tree = parsing.parse(before)
    except (SyntaxError, ValueError):
        return False
    func, arg = ast.dump(call.func), ast.dump(_first_arg(call, "path") or ast.Constant(None))
    return any(
        ast.dump(node.func) == func and ast.dump(_first_arg(node, "path") or ast.Constant(None)) == arg
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    )


# ------------------------------------------------------------------ who created it


@dataclass
class _Reader:
    """The module being judged and the project's other modules, read on demand."""

    file: str
    tree: ast.Module
    source: Source
    bound: dict[int, dict[tuple[str, bool], str]] = field(default_factory=dict)
    """Each module's imports (imports()), by the id of its tree."""

    def imports_of(self, tree: ast.Module) -> dict[tuple[str, bool], str]:
        return self.bound.setdefault(id(tree), imports(tree))

    def verdict(self, target: ast.expr | None, scope: Scope, cls: ast.ClassDef | None) -> tuple[Rule, str]:
        name = root(target)
        if name is None:
            return "not_created", f"explore cannot tell where `{ast.unparse(target) if target else '?'}` comes from"
        if name in _params(scope):
            return "not_created", f"`{name}` is a parameter: given by the caller"
        scopes: list[Scope] = [scope]
        if name.startswith("self.") and cls is not None:  # an attribute another method of the class may have made
            scopes += [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f is not scope]
        found = next((f for s in scopes if (f := self.created(name, s, self.file, self.tree, cls, DEPTH))), None)
        if found is None:
            return "not_created", f"`{name}` is not created in {self._where(scope)}"
        helper, how = found
        return ("created_by_helper" if helper else "created_here"), how

    @staticmethod
    def _where(scope: Scope) -> str:
        return f"`{scope.name}`" if not isinstance(scope, ast.Module) else "the module's own code"

    def created(
        self, name: str, scope: Scope, file: str, tree: ast.Module, cls: ast.ClassDef | None, depth: int
    ) -> tuple[bool, str] | None:
        """How the local name was created in scope: (through a helper?, how), or None."""
        params = _params(scope)
        for node in _own_nodes(scope):
            value: ast.expr | None = None
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                value, targets = node.value, node.targets
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                value, targets = node.value, [node.target]
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None and name in _bound(item.optional_vars):
                        made = self.makes_path(item.context_expr, file, tree, cls, depth)
                        if made is not None:
                            return made
            if value is not None and any(name in _bound(t) for t in targets):
                if root(value) in params and not _descends(value):
                    return None  # a plain alias of what the caller gave
                made = self.makes_path(value, file, tree, cls, depth)
                if made is not None:
                    return made
            if isinstance(node, ast.Call):
                made = self.makes_arg(node, name, file, tree, cls, depth)
                if made is not None:
                    return made
        return None

    def makes_path(
        self, value: ast.expr, file: str, tree: ast.Module, cls: ast.ClassDef | None, depth: int
    ) -> tuple[bool, str] | None:
        """value is a directory created right there, or returned by a helper that created it."""
        if not isinstance(value, ast.Call):
            return None
        if _qualified(value.func, self.imports_of(tree)) in MAKES_PATH:
            return False, f"`{ast.unparse(value)}` created it"
        if depth <= 0:
            return None
        helper = self.resolve(value.func, file, tree, cls)
        if helper is None:
            return None
        function, where, module = helper
        returned = [n.value for n in _own_nodes(function) if isinstance(n, ast.Return) and n.value is not None]
        names = {root(r) for r in returned}
        if not returned or None in names or names & _params(function):
            return None
        for local in names:
            assert local is not None
            if self.created(local, function, where, module, None, depth - 1) is None:
                return None
        return True, f"`{_last_name(value.func)}` ({where}) creates the directory it returns"

    def makes_arg(
        self, call: ast.Call, name: str, file: str, tree: ast.Module, cls: ast.ClassDef | None, depth: int
    ) -> tuple[bool, str] | None:
        """call creates the directory `name` names (a creating call, or a helper that creates its argument)."""
        qualified = _qualified(call.func, self.imports_of(tree))
        if _last_name(call.func) == "mkdir" and isinstance(call.func, ast.Attribute) and not call.args:
            if root(call.func.value) == name and not _exist_ok(call):  # x.mkdir(), Path(x).mkdir()
                return False, f"`{ast.unparse(call)}` created it"
            return None
        if qualified in MAKES_ARG:
            if _exist_ok(call):
                return None
            index = MAKES_ARG[qualified]
            arg = call.args[index] if len(call.args) > index else None
            if arg is not None and root(arg) == name and not _descends(arg):
                return False, f"`{ast.unparse(call)}` created it"
            return None
        if depth <= 0 or not call.args or root(call.args[0]) != name or _descends(call.args[0]):
            return None
        helper = self.resolve(call.func, file, tree, cls)
        if helper is None:
            return None
        function, where, module = helper
        first = [p.arg for p in [*function.args.posonlyargs, *function.args.args] if p.arg not in ("self", "cls")]
        if first and self._creates_param(function, first[0], where, module, depth - 1):
            return True, f"`{ast.unparse(call.func)}` ({where}) creates the directory it is given"
        return None

    def _creates_param(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, param: str, file: str, tree: ast.Module, depth: int
    ) -> bool:
        return any(
            isinstance(n, ast.Call) and self.makes_arg(n, param, file, tree, None, depth) is not None
            for n in _own_nodes(function)
        )

    # -------------------------------------------------------------- helpers of the project

    def resolve(
        self, func: ast.expr, file: str, tree: ast.Module, cls: ast.ClassDef | None
    ) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, str, ast.Module] | None:
        """The project function a call names: in the same module (or class, for `self.f`), or
        imported from one of the project's modules."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self" and cls is not None:
                method = _find_def(cls.body, func.attr)
                return (method, file, tree) if method is not None else None
            return self._defined(self._imported_module(func.value.id, file, tree), func.attr)
        if not isinstance(func, ast.Name):
            return None
        local = _find_def(tree.body, func.id)
        if local is not None:
            return local, file, tree
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == func.id:
                        return self._defined(_module_paths(file, node.module, node.level), alias.name)
        return None

    def _imported_module(self, name: str, file: str, tree: ast.Module) -> tuple[str, ...]:
        """Where the module a name was imported as may be (`import a.b as m`, `from . import m`)."""
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        dotted = f"{node.module}.{alias.name}" if node.module else alias.name
                        return _module_paths(file, dotted, node.level)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return _module_paths(file, alias.name, 0)
        return ()

    def _defined(
        self, paths: tuple[str, ...], name: str
    ) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, str, ast.Module] | None:
        """The top-level function name of the first of paths that exists in the project."""
        for path in paths:
            text = self.source(path)
            if text is None:
                continue
            try:
                module = parsing.parse(text)
            except (SyntaxError, ValueError):
                return None
            found = _find_def(module.body, name)
            return (found, path, module) if found is not None else None
        return None


def _find_def(body: list[ast.stmt], name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def _module_paths(file: str, module: str | None, level: int) -> tuple[str, ...]:
    """Where a module imported by file may be in the repository (`a/b.py`, `a/b/__init__.py`, and
    under `src/` for an absolute import); none outside it."""
    if level:
        parts = file.split("/")[:-1]
        if level - 1 > len(parts):
            return ()
        parts = parts[: len(parts) - (level - 1)]
        base = "/".join(parts + (module.split(".") if module else []))
    else:
        base = "/".join(module.split(".")) if module else ""
    if not base:
        return ()
    paths = (f"{base}.py", f"{base}/__init__.py")
    return paths if level else (*paths, f"src/{base}.py", f"src/{base}/__init__.py")
