"""Library code that reaches into the test harness or reads the running program: a candidate's
change read as a syntax tree.

Code under test has no business knowing it is under test. A change to non-test Python code that
adds a reference to the test machinery — pytest's or unittest's modules, the runner's environment
variables (`PYTEST_CURRENT_TEST`, `EXPLORE_*`), `"pytest" in sys.modules`, the caller's frames
(`sys._getframe`, `inspect.stack`), a rebinding of `builtins` — is how code bends the harness or
behaves differently under test, so it is tamper. So is a capability to read the running program,
whatever name it looks for: the loaded modules (`sys.modules`, but `sys.modules[__name__]`), frames
(`sys._getframe`, `inspect`, tracebacks' stacks), every live object or class (`gc`,
`__subclasses__`), raw memory (`ctypes`), the command line (`sys.argv`), another module's globals
(`vars(mod)`, `mod.__dict__`, `f.__globals__`, closures' cells), the import system (`importlib`,
`__import__`, `sys.meta_path`), code from strings (`eval`, `exec`), the environment read as a
whole (`os.environ.items()`, a key not written out, `/proc/self/environ`) — the harness's state is
reached that way without naming it (see `CAPABILITIES`) —, and ending or replacing the test process
behind pytest's back (`os._exit`, `os.exec*`), which is what forging explore's record of the test
calls would take (decide/witness). Such a module (`sys`, `gc`, `os`…) is read only through the
attributes the source names on it: passed on as a value (`[sys][0].modules`, `m = sys`) or reached
as another module's attribute (`json.sys`), it counts as every capability it has. A reference the file already had at the same
place (the same function or class) before the run is the project's own business: a pytest plugin
package's library code imports pytest.

Pure: two texts of a file in, the new references out. `reason` at the end reads the texts from git
and the worktree. Obvious indirections count (`importlib.import_module("_pytest.reports")`,
`__import__`, `getattr(sys, "_getframe")`, `os.environ["PYTEST_" + name]`, an alias of an import);
code assembled at run time out of pieces or decoded from data (a string run by `timeit`, a pickle
naming `sys.modules`) is beyond a syntax tree — explore's record of each test call (`witness`) still
catches a report bent that way.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..decide import parsing, testcode
from ..model.testfiles import is_test_file
from . import testcode_io
from .gitrepo import GIT

HARNESS_MODULES = frozenset({"pytest", "_pytest", "pluggy", "unittest", "doctest", "xdist"})
HARNESS_PREFIXES = ("pytest_", "_pytest", "explore_", "_explore")
"""Plugin modules (pytest_jsonreport, pytest_timeout…) and explore's own plugins."""
RUNNER_ENV_PREFIXES = ("PYTEST", "_PYTEST", "EXPLORE_")
INTROSPECTION = frozenset(
    {
        "sys._getframe",
        "sys._current_frames",
        "sys.settrace",
        "sys.setprofile",
        "threading.settrace",
        "threading.setprofile",
        "inspect.stack",
        "inspect.currentframe",
        "inspect.getouterframes",
        "inspect.trace",
        "traceback.extract_stack",
        "traceback.walk_stack",
        "traceback.format_stack",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
    }
)
"""Ways to look at the caller (the test, the runner) or at every live object (pytest's included)."""
PROCESS_ENDS = ("_exit", "execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe")
"""Ends or replaces the test process without pytest's end: what forging explore's record of the test
calls takes once nothing in the process is secret (decide/witness)."""
CAPABILITIES: dict[str, str] = {
    **{name: "frames" if not name.startswith("gc.") else "live objects" for name in INTROSPECTION},
    "sys.modules": "loaded modules",
    "sys.argv": "the command line",
    "sys.orig_argv": "the command line",
    "sys.meta_path": "the import system",
    "sys.path_hooks": "the import system",
    "sys.path_importer_cache": "the import system",
    "sys.addaudithook": "audit hooks",
    "importlib": "the import system",
    "builtins.__import__": "the import system",
    "__import__": "the import system",
    "gc": "live objects",
    "inspect": "frames",
    "ctypes": "raw memory",
    "eval": "code from strings",
    "exec": "code from strings",
    "os.environ.items": "the whole environment",
    "os.environ.keys": "the whole environment",
    "os.environ.values": "the whole environment",
    "os.environ.copy": "the whole environment",
    **{f"os.{name}": "ending or replacing its process behind the test runner" for name in PROCESS_ENDS},
    "posix": "the raw system interface",
}
"""Reads of the running program, by what they give (the key a file's old version is compared on):
a dotted name or any name below it (`importlib.util.find_spec` is `importlib`'s)."""
DUNDER_CAPABILITIES = {
    "__globals__": "another module's globals",
    "__closure__": "another module's globals",
    "cell_contents": "another module's globals",
    "__subclasses__": "live objects",
}
CAPABILITY_MODULES = frozenset({"gc", "inspect", "ctypes", "importlib", "posix"})
RUNTIME_MODULES = frozenset({"sys", "builtins", "os", "gc", "inspect", "ctypes", "importlib", "types", "posix"})
"""Modules whose attributes, fetched by a name computed at run time (`getattr(sys, "mod" + "ules")`),
give one of the capabilities above without naming it. The policy: such a module is read only
through attributes the source names on it. Passed on as a value (`[sys][0].modules`, `m = sys`,
`f(sys)`, `type(os)`) or reached as another module's attribute (`json.sys`, `os.sys`), it gives any
of them unseen: that counts as every capability it has."""
REACHED_MODULES = RUNTIME_MODULES - {"types"}
"""Attribute names that, on another module, are the module itself (`json.sys`); not `types`, which
names ordinary attributes of libraries (`pd.api.types`, `sqlalchemy.types`)."""
FRAME_ATTRIBUTES = frozenset({"f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame"})
PIECES = (
    FRAME_ATTRIBUTES
    | {name.rsplit(".", 1)[1] for name in INTROSPECTION if name.rsplit(".", 1)[1].startswith("_")}
    | {"currentframe", "__builtins__"}
)
"""Attribute names that count even as strings (`getattr(sys, "_getframe")`, `vars(sys)["_getframe"]`)."""
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class Reference:
    place: str
    """The enclosing function or class (`Calc.add`), or `<module>`."""
    key: str
    """What is referenced, resolved through import aliases: `_pytest.reports.TestReport`, `'PYTEST_CURRENT_TEST'`."""
    shown: str
    """The code as written, for the reason (`"pytest" in sys.modules`)."""


def is_harness_module(name: str, own: frozenset[str] = frozenset()) -> bool:
    root = name.split(".", 1)[0]
    if root in own:
        return False
    return root in HARNESS_MODULES or root.startswith(HARNESS_PREFIXES) or name == "py.test"


def references(text: str, own: frozenset[str] = frozenset()) -> list[Reference]:
    """Every reference to the test machinery in a module's source; [] when it does not parse.
    own: the project's top-level modules (a plugin package `pytest_foo` importing itself is not harness)."""
    try:
        tree = parsing.parse(text)
    except (SyntaxError, ValueError):
        return []
    return _Finder(tree, own).found


def new_references(old: str | None, new: str | None, own: frozenset[str] = frozenset()) -> list[Reference]:
    """The references of `new` the file did not already have at the same place in `old`."""
    if new is None:
        return []
    before = {(r.place, r.key) for r in references(old or "", own)}
    seen: set[tuple[str, str]] = set()
    out = []
    for ref in references(new, own):
        if (ref.place, ref.key) not in before and (ref.place, ref.key) not in seen:
            seen.add((ref.place, ref.key))
            out.append(ref)
    return out


class _Finder(ast.NodeVisitor):
    def __init__(self, tree: ast.Module, own: frozenset[str]) -> None:
        self.own = own
        self.found: list[Reference] = []
        self.places: list[str] = []
        self.parents: dict[ast.AST, ast.AST] = {
            child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)
        }
        self.docstrings = {
            id(body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and (body := node.body)
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        }
        self.aliases = _aliases(tree)
        self.visit(tree)

    def add(self, key: str, node: ast.AST) -> None:
        shown = ast.unparse(node)
        self.found.append(
            Reference(
                self.places[-1] if self.places else "<module>", key, shown if len(shown) <= 90 else shown[:87] + "..."
            )
        )

    def scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.places.append(f"{self.places[-1]}.{node.name}" if self.places else node.name)
        self.generic_visit(node)
        self.places.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = scoped

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if is_harness_module(alias.name, self.own):
                self.add(f"import {alias.name}", node)
            elif alias.name.split(".", 1)[0] in CAPABILITY_MODULES:
                self.add(f"can {CAPABILITIES[alias.name.split('.', 1)[0]]}", node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            return  # the package's own modules
        for alias in node.names:
            path = f"{module}.{alias.name}"
            if is_harness_module(module, self.own):
                self.add(f"import {path}", node)
            elif (found := capability(path)) is not None:
                self.add(f"can {found}", node)

    def visit_Name(self, node: ast.Name) -> None:
        module = self.aliases.get(node.id)
        if module in RUNTIME_MODULES and isinstance(node.ctx, ast.Load) and not self.named_on(node):
            self.add(f"can {module} as a value", self.expression(node))
        self.chain(node)

    def named_on(self, node: ast.Name) -> bool:
        """The module read through an attribute the source names (`sys.path`, `getattr(sys, "x")`)."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute):
            return True
        return (
            isinstance(parent, ast.Call)
            and isinstance(parent.func, ast.Name)
            and parent.func.id in ("getattr", "setattr", "delattr", "hasattr")
            and bool(parent.args)
            and parent.args[0] is node
        )

    def expression(self, node: ast.AST) -> ast.AST:
        """The whole expression a name takes part in, for the reason (`[sys][0].modules.get('gc')`)."""
        while isinstance(self.parents.get(node), ast.expr):
            node = self.parents[node]
        return node

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in REACHED_MODULES and _root_name(node.value) in self.aliases:
            self.add(f"can {node.attr} through another module", node)
        if node.attr in FRAME_ATTRIBUTES:
            self.add(f".{node.attr}", node)
        elif node.attr in DUNDER_CAPABILITIES:
            self.add(f"can {DUNDER_CAPABILITIES[node.attr]}", node)
        elif node.attr == "__dict__" and _dotted(node.value, self.aliases) in self.aliases.values():
            self.add("can another module's globals", node)
        self.chain(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id == "vars"
            and node.args
            and _dotted(node.args[0], self.aliases) in self.aliases.values()
        ):
            self.add("can another module's globals", node)
        if isinstance(func, ast.Name) and func.id in ("__import__", "eval", "exec"):
            self.add(f"can {CAPABILITIES[func.id]}", node)
        elif _dotted(func, self.aliases) in ("os.environ.get", "os.getenv") and not (
            node.args and isinstance(node.args[0], (ast.Constant, ast.BinOp, ast.JoinedStr))
        ):
            self.add("can the whole environment", node)
        if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "delattr") and len(node.args) >= 2:
            base, name = _dotted(node.args[0], self.aliases), node.args[1]
            if base and isinstance(name, ast.Constant) and isinstance(name.value, str):
                self.resolved(f"{base}.{name.value}", node, write=func.id != "getattr")
            elif base and base.split(".", 1)[0] in RUNTIME_MODULES:
                self.add(f"can an attribute of {base} it does not name", node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.writes(node.targets, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.writes([node.target], node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.writes([node.target], node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self.writes(node.targets, node)

    def writes(self, targets: list[ast.expr], node: ast.stmt) -> None:
        """`builtins.__dict__["len"] = …` (an attribute target is a chain in Store context)."""
        for target in targets:
            path = _dotted(target.value, self.aliases) if isinstance(target, ast.Subscript) else None
            if path and path.split(".", 1)[0] == "builtins":
                self.add(f"rebinds {path}[]", target)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if not isinstance(value, str) or id(node) in self.docstrings:
            return
        named = _DOTTED.fullmatch(value) and is_harness_module(value, self.own)
        if named or value.startswith(RUNNER_ENV_PREFIXES) or value in PIECES:
            self.add(repr(value), self.context(node))
        elif value.startswith("/proc/"):
            self.add("can the process's memory and first environment", self.context(node))

    def chain(self, node: ast.Name | ast.Attribute) -> None:
        """An outermost name or attribute chain (`_pytest.reports.TestReport.from_item_and_call`)."""
        if isinstance(self.parents.get(node), ast.Attribute):
            return
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id not in self.aliases and base.id != "__builtins__":
            return  # a local name that happens to be called `stack` or `pytest`
        path = _dotted(node, self.aliases)
        if path:
            self.resolved(path, node, write=isinstance(node.ctx, (ast.Store, ast.Del)))

    def resolved(self, path: str, node: ast.AST, write: bool) -> None:
        root = path.split(".", 1)[0]
        if root == "__builtins__" or (write and root == "builtins"):
            self.add(f"rebinds {path}" if write else path, node)
        elif is_harness_module(path, self.own):
            self.add(path, node)
        elif (found := capability(path)) is not None and not self.own_entry(node):
            self.add(f"can {found}", node)

    def own_entry(self, node: ast.AST) -> bool:
        """`sys.modules[__name__]`: a module reading its own entry reads nothing of the harness."""
        parent = self.parents.get(node)
        return (
            isinstance(parent, ast.Subscript) and isinstance(parent.slice, ast.Name) and parent.slice.id == "__name__"
        )

    def context(self, node: ast.AST) -> ast.AST:
        """What to show for a string: the comparison, call or subscript it takes part in."""
        shown = node
        parent = self.parents.get(shown)
        while isinstance(parent, (ast.BinOp, ast.JoinedStr, ast.FormattedValue)):
            shown, parent = parent, self.parents.get(parent)
        return parent if isinstance(parent, (ast.Compare, ast.Call, ast.Subscript)) else shown


def capability(path: str) -> str | None:
    """What of the running program the dotted name reads (CAPABILITIES), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        found = CAPABILITIES.get(".".join(parts[:cut]))
        if found is not None:
            return found
    return None


def _root_name(node: ast.expr) -> str | None:
    """The name an attribute chain starts from (`json` in `json.decoder.sys`), or None."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → the module path it stands for (`import _pytest.reports as r` → r: `_pytest.reports`)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".", 1)[0]] = (
                    alias.name if alias.asname else alias.name.split(".", 1)[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """`a.b.c` with its first name resolved through the imports, or None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
    ):
        name = node.args[1]
        base = _dotted(node.args[0], aliases)
        if base is None or not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return None
        return ".".join([base, name.value, *reversed(parts)])
    if not isinstance(node, ast.Name):
        return None
    return ".".join([aliases.get(node.id, node.id), *reversed(parts)])


# -------------------------------------------------------------------------------------- the edge


def library_files(files: Iterable[str], test_patterns: list[str], test_code: set[str]) -> list[str]:
    """The changed Python files that are neither tests nor the harness (conftest, plugins)."""
    return [
        f
        for f in files
        if f.endswith(".py")
        and not is_test_file(f, test_patterns)
        and f not in test_code
        and PurePosixPath(f).name not in testcode.WHOLE_HARNESS_NAMES
    ]


def own_modules(paths: Iterable[str]) -> frozenset[str]:
    """The project's top-level importable names, from its tracked files (`src/` layout or flat)."""
    names = set()
    for path in paths:
        parts = PurePosixPath(path).parts
        if parts and parts[0] == "src":
            parts = parts[1:]
        if len(parts) > 1 or (parts and parts[0].endswith(".py")):
            names.add(parts[0].removesuffix(".py"))
    return frozenset(names)


def describe(found: dict[str, list[Reference]]) -> str | None:
    if not found:
        return None
    parts = []
    for path, refs in found.items():
        shown = list(
            dict.fromkeys(
                f"`{r.shown}`" + (f" in {r.place}" if r.place != "<module>" else "")
                for r in refs
                if not any(r.shown in o.shown and r.shown != o.shown and o.place == r.place for o in refs)
            )
        )
        parts.append(f"{path}: {', '.join(shown[:3])}" + (f" and {len(shown) - 3} more" if len(shown) > 3 else ""))
    return f"reaches into the test harness or reads the running program from library code: {'; '.join(parts[:3])}"


def reason(
    workdir: Path, commit: str, files: list[str], test_patterns: list[str], baseline_ids: Iterable[str]
) -> str | None:
    """Why a candidate's change to `workdir` (from `commit`) references the test machinery, or None."""
    tracked = subprocess.run(
        [*GIT, "ls-tree", "-r", "--name-only", commit], cwd=workdir, capture_output=True, text=True, timeout=60
    )
    own = own_modules(tracked.stdout.splitlines())
    collected = testcode.collected_files(baseline_ids)
    test_code = testcode_io.plugin_files(workdir, commit) | {
        path for path, doctests_only in collected.items() if not doctests_only
    }
    found = {}
    for path in library_files(files, test_patterns, test_code):
        refs = new_references(testcode_io.git_show(workdir, commit, path), testcode_io.read(workdir / path), own)
        if refs:
            found[path] = refs
    return describe(found)
