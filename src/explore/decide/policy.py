"""What a candidate may change (DESIGN §4), stated once: the policy value and the verdict over a
captured change — pure.

Allowed: modifying the project's existing source files, and adding Python modules inside its
existing packages (a folder that held an `__init__.py` at the commit). Everything else is rejected,
each file with the rule it breaks, in terms of what the interpreter and pytest will load:

- anything Python runs at start-up — `sitecustomize`/`usercustomize` as a module or a package, a
  `*.pth` file — wherever it is (a folder on `sys.path` is the project's to choose);
- packaging metadata in any letter case (`*.dist-info`, `*.egg-info`, `entry_points.txt`): entry
  points declare pytest plugins, and Python's metadata lookup ignores case;
- a new module or package importable at the top level (outside every existing package): a name
  that shadows the standard library or an installed distribution is always rejected, any other
  only a project's `allow-new-files` admits; any other new file outside the packages likewise;
- what git reads from the tree (`.gitattributes`: filters and textconv; `.gitmodules`; `.gitignore`:
  what a capture leaves out);
- symbolic links (new, retargeted, or a file turned into one), gitlinks and nested repositories,
  mode changes, binary files in code folders;
- test files, test support (the modules the tests import that the library does not use: found
  from the baseline's import graph, see `test_support`) and the issue's reproduction tests, unless
  `allow-test-edits` (the reproduction tests never);
- a path named `.explore` (explore's own state).

What pytest's configuration files say (addopts, plugins, doctests, the data the tests read) is
read by decide/testcode; what library code reaches into (capabilities) by edges/harness_refs.
The facts this verdict needs (modes, tracked files, installed names, the tests' imports) are read
by edges/policy_io.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePosixPath

from ..model.testfiles import is_test_file
from . import parsing

LINK, GITLINK = "120000", "160000"
STARTUP_NAMES = frozenset({"sitecustomize", "usercustomize"})
GIT_FILES = frozenset({".gitattributes", ".gitmodules", ".gitignore"})
"""Filters, textconv and submodules git runs or follows, and what it leaves out of a capture."""
METADATA_SUFFIXES = (".dist-info", ".egg-info", ".egg-link")
CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyd", ".so", ".dll", ".dylib", ".pth")
EXPLORE_DIR = ".explore"
LAYOUT_DIRS = ("src", "lib")
"""A layout folder holds top-level packages; it is not one itself."""


class Rule(Enum):
    """Why a file of a change is out of a candidate's reach; the value is the reason's words."""

    explore_state = "touches .explore, explore's own state"
    startup = "adds or changes start-up code Python runs before any test (sitecustomize, usercustomize, *.pth)"
    metadata = "adds or changes package metadata pytest reads entry points from (*.dist-info, *.egg-info)"
    git_files = "changes what git reads from the tree (.gitattributes, .gitmodules, .gitignore)"
    link = "adds or retargets a symbolic link"
    gitlink = "adds a gitlink or nested repository"
    mode = "changes a file mode"
    binary = "adds or changes a binary file in a code folder"
    shadows = "adds a top-level module shadowing the standard library or an installed distribution"
    new_top_level = "adds a new top-level module or package"
    outside = "adds a file outside the project's packages"
    reproduction = "edits the reproduction tests of the issue"
    test = "edits test files"
    test_support = "edits test support (a module the tests import and the library does not use)"


WIDENABLE = frozenset({Rule.new_top_level, Rule.outside, Rule.binary})
"""The rules `allow-new-files` lifts for the files its globs match; the others hold for every project."""
TEST_RULES = frozenset({Rule.test, Rule.test_support})
"""The rules `allow-test-edits` lifts."""


@dataclass(frozen=True)
class Entry:
    """One changed path of the captured tree against the commit (`git diff-tree --raw`)."""

    path: str
    status: str
    """A, M, D or T (git's letters)."""
    old_mode: str = "000000"
    new_mode: str = "000000"
    binary: bool = False
    target: str | None = None
    """Where a symbolic link points (new mode 120000)."""


@dataclass(frozen=True)
class Policy:
    """What one fan-out's candidates may change: decided once per commit, handed to every verdict."""

    tracked: frozenset[str]
    """The files at the commit the candidates start from."""
    test_patterns: tuple[str, ...]
    reserved: Container[str] = frozenset()
    """Top-level names a new module may not take: the standard library's and the installed distributions'."""
    test_support: frozenset[str] = frozenset()
    frozen: frozenset[str] = frozenset()
    allow_test_edits: bool = False
    allow_new_files: tuple[str, ...] = ()

    @functools.cached_property
    def packages(self) -> frozenset[str]:
        return frozenset(str(PurePosixPath(p).parent) for p in self.tracked if PurePosixPath(p).name == "__init__.py")

    @functools.cached_property
    def folders(self) -> frozenset[str]:
        return frozenset(str(parent) for p in self.tracked for parent in PurePosixPath(p).parents)


@dataclass(frozen=True)
class Violation:
    path: str
    rule: Rule
    detail: str = ""


def verdict(policy: Policy, entries: Iterable[Entry]) -> list[Violation]:
    """Every file of the change the policy rejects, with its rule (empty: the change is allowed)."""
    packages, out = policy.packages, []
    for entry in entries:
        for rule, detail in _rules(policy, packages, entry):
            if rule in TEST_RULES and policy.allow_test_edits:
                continue
            if rule in WIDENABLE and _widened(policy, entry.path):
                continue
            out.append(Violation(entry.path, rule, detail))
            break
    return out


def describe(violations: list[Violation]) -> str | None:
    """The rejection: each rule broken with the files that break it (`edits test files: tests/t.py`)."""
    if not violations:
        return None
    by_rule: dict[Rule, list[str]] = {}
    for found in violations:
        by_rule.setdefault(found.rule, []).append(found.path + (f" {found.detail}" if found.detail else ""))
    parts = [
        f"{rule.value}: {', '.join(paths[:5])}" + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        for rule, paths in by_rule.items()
    ]
    return "; ".join(parts)


def _widened(policy: Policy, path: str) -> bool:
    return any(fnmatch.fnmatch(path, glob) for glob in policy.allow_new_files)


def _rules(policy: Policy, packages: frozenset[str], entry: Entry) -> Iterable[tuple[Rule, str]]:
    path, parts = entry.path, PurePosixPath(entry.path).parts
    lowered = [part.lower() for part in parts]
    added = entry.status == "A" or (entry.path not in policy.tracked and entry.status != "D")
    if EXPLORE_DIR in parts:
        yield Rule.explore_state, ""
    if any(part.split(".", 1)[0] in STARTUP_NAMES for part in lowered) or lowered[-1].endswith(".pth"):
        yield Rule.startup, ""
    if any(part.endswith(METADATA_SUFFIXES) for part in lowered) or lowered[-1] == "entry_points.txt":
        yield Rule.metadata, ""
    if lowered[-1] in GIT_FILES:
        yield Rule.git_files, ""
    if LINK in (entry.old_mode, entry.new_mode) and entry.status != "D":
        yield Rule.link, f"-> {entry.target}" if entry.target is not None else ""
    if GITLINK in (entry.old_mode, entry.new_mode) and entry.status != "D":
        yield Rule.gitlink, ""
    if entry.status == "M" and entry.old_mode != entry.new_mode:
        yield Rule.mode, f"({entry.old_mode} -> {entry.new_mode})"
    if path in policy.frozen:
        yield Rule.reproduction, ""
    if is_test_file(path, policy.test_patterns):
        yield Rule.test, ""
    if path in policy.test_support:
        yield Rule.test_support, ""
    if added and entry.status != "D":
        yield from _new_file(policy, packages, entry)
    if entry.binary and entry.status != "D" and (lowered[-1].endswith(CODE_SUFFIXES) or _code_folder(policy, path)):
        yield Rule.binary, ""


def _new_file(policy: Policy, packages: frozenset[str], entry: Entry) -> Iterable[tuple[Rule, str]]:
    parts = PurePosixPath(entry.path).parts
    names = _top_level_names(parts, packages, policy.folders)
    shadowing = sorted(name for name, _ in names if name in policy.reserved)
    if shadowing:
        yield Rule.shadows, f"({shadowing[0]})"
        return
    if ("/".join(parts[:-1]) or ".") in packages or is_test_file(entry.path, policy.test_patterns):
        return  # a module inside an existing package; a new test file, which the test rule decides
    at_top = any(folder in (".", *LAYOUT_DIRS) for _, folder in names)
    yield (Rule.new_top_level if at_top else Rule.outside), ""


def _top_level_names(parts: tuple[str, ...], packages: frozenset[str], folders: frozenset[str]) -> set[tuple[str, str]]:
    """The top-level names a new file makes importable, each with the folder that would have to be
    on `sys.path`: a module outside every package (`x.py` → x), and the first new folder on its
    path when its parent is not a package (`x/y/z.py` → x)."""
    names: set[tuple[str, str]] = set()
    parent = "/".join(parts[:-1]) or "."
    if parent not in packages and parts[-1].endswith(".py"):
        names.add((parts[-1][:-3], parent))
    if not parts[-1].endswith(".py"):
        return names  # no code below it: a data file makes nothing importable
    for depth in range(len(parts) - 1):
        folder = "/".join(parts[:depth]) or "."
        if "/".join(parts[: depth + 1]) not in folders:
            if folder not in packages and parts[depth].isidentifier():
                names.add((parts[depth], folder))
            break
    return names


def _code_folder(policy: Policy, path: str) -> bool:
    folder = str(PurePosixPath(path).parent)
    return any(str(PurePosixPath(p).parent) == folder and p.endswith(".py") for p in policy.tracked)


# ------------------------------------------------------------------------------ test support


def module_of(path: str) -> str | None:
    """The dotted name a tracked Python file is imported by (`src/pkg/testing.py` → `pkg.testing`)."""
    if not path.endswith(".py"):
        return None
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] in LAYOUT_DIRS and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


IMPORT_LINE = re.compile(
    r"^[ \t]*(from[ \t]+[.\w]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t]+[^\n]*)", re.MULTILINE
)
"""An import statement at the start of a line (a parenthesised name list across lines included):
parsed alone, far cheaper than a whole module, for the import graph of every file at a commit."""


def imported(path: str, source: str) -> set[str]:
    """The modules a file imports, relative imports resolved against its own package, each name
    also as its parents (`from pkg.testing import x` → pkg.testing.x, pkg.testing, pkg)."""
    name = module_of(path)
    own = name.split(".") if name else []
    package = own if path.endswith("__init__.py") else own[:-1]
    names: set[str] = set()
    for statement in IMPORT_LINE.findall(source):
        try:
            node = parsing.parse(
                statement.split(";", 1)[0].split("#", 1)[0] if "(" not in statement else statement
            ).body[0]
        except (SyntaxError, ValueError, IndexError):
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1] if node.level <= len(package) + 1 else []
                base = ".".join([*anchor, *([base] if base else [])])
            if base:
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
    return {".".join(n.split(".")[:cut]) for n in names for cut in range(1, n.count(".") + 2)}


def test_support(sources: Mapping[str, str], tests: Iterable[str]) -> frozenset[str]:
    """Test support, protected like a test file: the tracked modules the test code imports directly
    that the library's own code does not import, and that assert (an `assert` statement, `raise
    AssertionError`) — `pkg/testing.py` behind the tests' `assert_equal`. A subpackage imported that
    way (`pkg/testing/`, as numpy.testing is) that no code outside it imports is support with its
    asserting modules and its `__init__.py`, which re-exports them. Read from the import graph
    of the sources at the commit (path → text), never from names; the module under test, which the
    tests import and nothing asserts in, stays the library's."""
    test_set = set(tests)
    by_name: dict[str, str] = {}
    for path in sources:
        name = module_of(path)
        if name:
            by_name.setdefault(name, path)
            by_name.setdefault(name.rsplit(".", 1)[-1], path)  # a folder on sys.path reaches `mod` too
    imports = {path: imported(path, source) for path, source in sources.items()}
    used_by_tests = set().union(*(names for path, names in imports.items() if path in test_set))
    found: set[str] = set()
    library = _library_imports(imports, test_set, "")
    for name in sorted(used_by_tests):
        module = by_name.get(name)
        if not module or module in test_set:
            continue
        if not module.endswith("__init__.py"):
            if name not in library and _asserts(sources[module]):
                found.add(module)
            continue
        if "." not in (module_of(module) or ""):
            continue  # a top-level package: the library itself, whatever the tests import of it
        folder = module[: -len("__init__.py")]
        outside = _library_imports(imports, test_set, folder)
        inside = [p for p in sources if p.startswith(folder) and p not in test_set and module_of(p)]
        if name in outside or any(module_of(p) in outside for p in inside):
            continue  # the library uses it (checked first: parsing every module of a package is not cheap)
        asserting = [p for p in inside if _asserts(sources[p])]
        if asserting:
            found.update([*asserting, module])
    return frozenset(found)


def _library_imports(imports: Mapping[str, set[str]], tests: set[str], outside_of: str) -> set[str]:
    """The modules the library's code imports (its files outside tests and, when given, outside the
    folder `outside_of`)."""
    return set().union(
        *(
            names
            for path, names in imports.items()
            if path not in tests and not (outside_of and path.startswith(outside_of))
        )
    )


def _asserts(source: str) -> bool:
    try:
        tree = parsing.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in _statements(tree):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id == "AssertionError":
                return True
    return False


def _statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement of a module, nested ones too, never descending into expressions (an import or
    an assert is a statement: walking every expression node costs ten times as much)."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                for child in reversed(children):
                    if isinstance(child, ast.stmt):
                        stack.append(child)
                    elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                        stack.extend(reversed(child.body))
