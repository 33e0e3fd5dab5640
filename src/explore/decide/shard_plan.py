"""How a full-suite run splits into shards, and whether splitting pays — pure.

Test files are weighed by their tests' recorded durations (or counted tests, or the tests a file
defines on disk for a first plan) and dealt out heaviest first. `executors/shards` runs the plan:
it lists the tracked files (`disk_weights`), makes the shard jobs and merges their results.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import heapq
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..model.testresults import TestRun
from . import parsing

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib


def file_of(test_id: str) -> str | None:
    return test_id.split("::", 1)[0] if "::" in test_id else None


def file_weights(ids: Iterable[str], durations: Mapping[str, float] | None = None) -> dict[str, float]:
    """Seconds per test file from recorded per-test durations; without any, the count of tests."""
    weights: dict[str, float] = defaultdict(float)
    for test_id in ids:
        path = file_of(test_id)
        if path is not None:
            weights[path] += durations.get(test_id, 0.0) if durations else 1.0
    if durations and weights and not any(weights.values()):
        return file_weights(ids)  # durations all zero (custom report): balance by count
    return dict(weights)


PYTEST_FILES = ("test_*.py", "*_test.py")
"""pytest's default `python_files`: what a first plan finds on disk (other files go to the rest shard)."""
TEST_DEF = re.compile(rb"^\s*(?:async\s+)?def\s+test|^\s*class\s+Test", re.MULTILINE)


NORECURSEDIRS = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
"""pytest's default `norecursedirs`."""
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "tox.ini", "setup.cfg")
"""Where pytest reads its configuration at the root, in the order it looks (the first that holds a
pytest section wins; pytest.ini and .pytest.ini win even empty; the TOML ones are pytest 9's)."""


@dataclass(frozen=True)
class CollectRules:
    """What of pytest's configuration decides which files an argument-less `pytest` at the root
    collects (a first plan weighs only those): `testpaths`, `norecursedirs`, `python_files`."""

    testpaths: tuple[str, ...] = ()
    """Globs from the root; () collects from the root itself."""
    norecursedirs: tuple[str, ...] = NORECURSEDIRS
    python_files: tuple[str, ...] = PYTEST_FILES


def collect_rules(configs: Mapping[str, str]) -> CollectRules:
    """The rules of the first configuration file, in pytest's order (CONFIG_FILES), that holds a
    pytest section, from the root's files' texts by name; pytest's defaults when none does (or it
    does not parse: pytest would stop at it, and the plan is only a plan)."""
    for name in CONFIG_FILES:
        if name not in configs:
            continue
        section = _pytest_section(name, configs[name])
        if section is None:
            continue
        return CollectRules(
            testpaths=_words(section.get("testpaths")) or (),
            norecursedirs=_words(section.get("norecursedirs")) or NORECURSEDIRS,
            python_files=_words(section.get("python_files")) or PYTEST_FILES,
        )
    return CollectRules()


def _pytest_section(name: str, text: str) -> Mapping[str, object] | None:
    """The pytest options of one configuration file; None when it holds none."""
    if name.endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
        if name == "pyproject.toml":
            table = data.get("tool", {}).get("pytest", {})
            found = table.get("ini_options") if isinstance(table, dict) else None
        else:
            found = data.get("pytest", {})
        return found if isinstance(found, dict) else None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    section = {"setup.cfg": "tool:pytest"}.get(name, "pytest")
    if parser.has_section(section):
        return dict(parser[section])
    return {} if name in ("pytest.ini", ".pytest.ini") else None


def _words(value: object) -> tuple[str, ...] | None:
    """An ini option's list: a TOML list, or whitespace-separated words (one a line or not)."""
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, str):
        return tuple(value.split()) or None
    return None


def _match(path: PurePosixPath, pattern: str) -> bool:
    """pytest's fnmatch_ex: a pattern without a separator matches the name, else the path's end."""
    if "/" not in pattern:
        return fnmatch.fnmatch(path.name, pattern)
    return fnmatch.fnmatch(str(path), pattern if pattern.startswith("/") else f"*/{pattern}") or fnmatch.fnmatch(
        str(path), pattern
    )


def collects(path: str, rules: CollectRules = CollectRules()) -> bool:
    """Whether an argument-less `pytest` at the root collects the test file path (relative, with
    `/`) under rules: its name matches `python_files`, it lies under one of `testpaths` (any when
    there are none; a testpath naming the file itself counts whatever its name), and no folder
    between the starting point and the file matches `norecursedirs`."""
    file = PurePosixPath(path)
    for start in [str(PurePosixPath(p)) for p in rules.testpaths] or ["."]:
        depth = 0 if start == "." else len(PurePosixPath(start).parts)
        if depth > len(file.parts) or not fnmatch.fnmatchcase("/".join(file.parts[:depth]) or ".", start):
            continue
        if depth == len(file.parts):
            return True
        below = file.parts[depth:-1]
        if any(_match(PurePosixPath(part), pattern) for part in below for pattern in rules.norecursedirs):
            continue
        if any(_match(file, pattern) for pattern in rules.python_files):
            return True
    return False


def source_weight(source: bytes) -> float:
    """A test file's weight for a first plan: the tests it defines — `test…` functions, and `test…`
    methods of its classes — each `parametrize` with a list of cases counting as that many (stacked
    ones multiply; a class's multiply its methods'); at least 1. A list of cases is a literal, a
    module-level name bound to one above the definition (`CASES = [...]`), either wrapped in
    `tuple()`/`list()`/`sorted()`…, or a comprehension over one; another expression counts 1. A file
    that does not parse: its `def test…` / `class Test…` lines."""
    try:
        tree = parsing.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return float(max(1, len(TEST_DEF.findall(source))))
    return float(max(1, _tests_in(tree.body, {})))


def _tests_in(body: list[ast.stmt], names: dict[str, int]) -> int:
    """The tests body defines; names: the module-level names bound to a list of cases so far (a
    name bound again later counts as bound where each definition reads it)."""
    total = 0
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            total += _cases(node.decorator_list, names)
        elif isinstance(node, ast.ClassDef):
            total += _cases(node.decorator_list, names) * _tests_in(node.body, dict(names))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    length = _length(node.value, names) if node.value is not None else None
                    if length is None:
                        names.pop(target.id, None)
                    else:
                        names[target.id] = length
    return total


WRAPPERS = frozenset({"tuple", "list", "set", "frozenset", "sorted", "reversed"})
"""Calls that keep their argument's number of cases."""


def _length(value: ast.expr, names: dict[str, int]) -> int | None:
    """How many cases value holds, when it can be read from the source; None otherwise."""
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return len(value.elts) if not any(isinstance(e, ast.Starred) for e in value.elts) else None
    if isinstance(value, ast.Name):
        return names.get(value.id)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in WRAPPERS:
        return _length(value.args[0], names) if len(value.args) == 1 and not value.keywords else None
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and len(value.generators) == 1:
        loop = value.generators[0]
        return None if loop.ifs or loop.is_async else _length(loop.iter, names)
    return None


def _cases(decorators: list[ast.expr], names: dict[str, int]) -> int:
    """How many tests one definition makes: the product of its `parametrize` lists' lengths."""
    count = 1
    for decorator in decorators:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)):
            continue
        if decorator.func.attr != "parametrize":
            continue
        values = decorator.args[1] if len(decorator.args) > 1 else None
        values = values or next((k.value for k in decorator.keywords if k.arg == "argvalues"), None)
        length = _length(values, names) if values is not None else None
        if length is not None:
            count *= max(1, length)
    return count


FIRST_TEST_S = 0.002
"""Seconds one test is taken to cost before any was timed (a first baseline's plan): on the ten
real-library suites of benchmarks/realworld, a test's own time plus pytest's per-test work is
1–3 ms. With DEFAULT_OVERHEAD_S, a first baseline splits in two from about 500 tests."""
DEFAULT_OVERHEAD_S = 1.0
"""What starting and ending one test process costs, until a run has measured it."""


def worthwhile(slots: int, test_seconds: float, overhead_s: float = DEFAULT_OVERHEAD_S) -> int:
    """--shards' default: the free slots, but one more shard only while the wall time it saves
    (T/(k-1) - T/k of the suite's T test seconds) is at least its process's cost spread over the
    slots (overhead / slots): a 3 s suite splits in two or three, a 0.3 s one stays whole, a
    30-minute one takes every slot. 1 when nothing was measured yet."""
    if test_seconds <= 0:
        return 1
    cost = max(overhead_s, 0.1) / max(slots, 1)
    count = 1
    while count < slots and test_seconds / (count * (count + 1)) >= cost:
        count += 1
    return count


def test_seconds(run: TestRun) -> float:
    return sum(outcome.duration_s for outcome in run.outcomes.values())


def process_overhead(run: TestRun) -> float:
    """An unsharded run's wall time beyond its tests' own: interpreter, imports, collection, report."""
    return max(0.1, run.duration_s - test_seconds(run))


def plan(weights: Mapping[str, float], shards: int) -> list[list[str]]:
    """Longest-processing-time-first: heaviest file to the lightest shard. Deterministic (ties by
    path); at most one shard per file; [] when sharding would not split anything."""
    count = min(shards, len(weights))
    if count < 2:
        return []
    heap: list[tuple[float, int]] = [(0.0, index) for index in range(count)]
    groups: list[list[str]] = [[] for _ in range(count)]
    for path in sorted(weights, key=lambda p: (-weights[p], p)):
        load, index = heapq.heappop(heap)
        groups[index].append(path)
        heapq.heappush(heap, (load + max(weights[path], 1e-6), index))
    return [sorted(group) for group in groups]
