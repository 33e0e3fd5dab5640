"""What counts as test code beyond the test-file patterns: the harness that decides which tests
run and how (pytest's config files of every name, conftest files, plugins, `pytest11` entry points
declared in the project's configuration), every file under a test directory, the files the
baseline collected tests from (doctests by their examples), and the data the tests read at the
baseline.

Pure: old and new file texts in, the offending files out. Reading the two versions of each changed
file from git and the worktree: edges/testcode_io.
"""

from __future__ import annotations

import ast
import configparser
import json
import shlex
import sys
from collections.abc import Callable, Collection, Iterable
from pathlib import PurePosixPath

from ..model.testfiles import is_test_file
from . import parsing

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

Reader = Callable[[str], "str | None"]
"""A file's text at one side of the change (None when it does not exist there)."""

WHOLE_HARNESS_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "noxfile.py",
        ".gitlab-ci.yml",
        ".travis.yml",
        "azure-pipelines.yml",
        "Jenkinsfile",
        "bitbucket-pipelines.yml",
        ".cirrus.yml",
        "appveyor.yml",
    }
)
RUNNER_FILES = {"make": "Makefile", "just": "justfile", "tox": "tox.ini", "nox": "noxfile.py"}
CI_DIRS = (".github/workflows/", ".circleci/", ".buildkite/", ".azure-pipelines/")
PYPROJECT_KEYS = ("tool.pytest", "tool.explore", "project.entry-points.pytest11", "tool.poetry.plugins.pytest11")
SETUP_CFG_SECTIONS = ("tool:pytest", "pytest")
CONFIG_FILES = ("pyproject.toml", "pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg")
"""The files pytest reads its configuration from (pytest 9 adds the two TOML ones)."""
TEST_DIRS = frozenset({"tests", "test"})


def harness_kind(path: str, old: str | None, new: str | None) -> str | None:
    """What of the test harness a change to `path` touches (e.g. `pyproject.toml [tool.pytest.ini_options.addopts = "-k x"]`), or None."""
    name = PurePosixPath(path).name
    if name in WHOLE_HARNESS_NAMES or path.startswith(CI_DIRS):
        return path
    if name == "pyproject.toml":
        before, after = _toml_flat(old), _toml_flat(new)
        if before is None or after is None:
            return f"{path} [unparseable]"
        changed = [
            f"{key} = {after[key]}" if key in after else f"{key} removed"
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key) and any(key == k or key.startswith(k + ".") for k in PYPROJECT_KEYS)
        ]
        return f"{path} [{'; '.join(changed[:3])}]" if changed else None
    if name == "setup.cfg":
        changed = [
            s for s in (*SETUP_CFG_SECTIONS, "options.entry_points") if _cfg_section(old, s) != _cfg_section(new, s)
        ]
        if changed == ["options.entry_points"] and "pytest11" not in (old or "") + (new or ""):
            return None
        return f"{path} [{', '.join(changed)}]" if changed else None
    if name == "setup.py" and "pytest11" in (old or "") + (new or ""):
        return f"{path} (pytest11 entry point)"
    return None


def _toml_flat(text: str | None) -> dict[str, str] | None:
    """A TOML document as dotted key → JSON value (tables flattened); None when unparseable."""
    if text is None:
        return {}
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    flat: dict[str, str] = {}

    def walk(node: object, prefix: str) -> None:
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, f"{prefix}.{key}" if prefix else str(key))
        else:
            flat[prefix] = json.dumps(node, sort_keys=True, default=str)

    walk(data, "")
    return flat


def _cfg_section(text: str | None, section: str) -> str | None:
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return "<unparseable>"
    return json.dumps(dict(parser[section]), sort_keys=True) if parser.has_section(section) else None


def plugin_names(config_texts: dict[str, str], conftest_texts: Iterable[str]) -> set[str]:
    """Modules pytest loads as plugins: `-p NAME` in addopts, `pytest_plugins` in conftest files."""
    names: set[str] = set()
    for path, text in config_texts.items():
        names |= _addopts_plugins(_addopts(path, text))
    for text in conftest_texts:
        try:
            tree = parsing.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
            ):
                values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                names |= {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    return names


def _addopts(path: str, text: str) -> str:
    if path.endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return ""
        pytest_table = (
            data.get("tool", {}).get("pytest", {}) if path.endswith("pyproject.toml") else data.get("pytest", {})
        )
        values = [pytest_table.get("addopts", ""), pytest_table.get("ini_options", {}).get("addopts", "")]
        return " ".join(
            " ".join(shlex.quote(v) for v in value) if isinstance(value, list) else str(value) for value in values
        )
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return ""
    for section in SETUP_CFG_SECTIONS:
        if parser.has_option(section, "addopts"):
            return parser.get(section, "addopts")
    return ""


def _addopts_plugins(addopts: str) -> set[str]:
    try:
        words = shlex.split(addopts)
    except ValueError:
        words = addopts.split()
    names: set[str] = set()
    for i, word in enumerate(words):
        if word == "-p" and i + 1 < len(words):
            names.add(words[i + 1])
        elif word.startswith("-p") and len(word) > 2:
            names.add(word[2:].lstrip("="))
    return {n for n in names if not n.startswith("no:")}


def module_paths(name: str) -> set[str]:
    """Where a plugin module `a.b` may live in a repository."""
    base = name.replace(".", "/")
    return {f"{prefix}{base}{suffix}" for prefix in ("", "src/") for suffix in (".py", "/__init__.py")}


def script_paths(shell: str | None) -> set[str]:
    """Repository files a custom test command names (`./ci/test.sh`, `python tools/run.py`)."""
    if not shell:
        return set()
    try:
        words = shlex.split(shell)
    except ValueError:
        words = shell.split()
    found = {RUNNER_FILES[w] for w in words if w in RUNNER_FILES}
    for word in words:
        if word.startswith("-") or "{" in word or word.startswith("/"):
            continue
        path = PurePosixPath(word)
        if path.suffix or word.startswith("./") or "/" in word:
            found.add(path.as_posix())
    return found


# ---------------------------------------------------------------------------------------- doctests


def collected_files(ids: Iterable[str]) -> dict[str, bool]:
    """Files that define collected tests → True when all they define are doctests (docstrings
    are test code, the rest is not), False when the whole file is a test module."""
    kinds: dict[str, bool] = {}
    for test_id in ids:
        path, sep, name = test_id.partition("::")
        if not sep or "." not in PurePosixPath(path).name:
            continue
        kinds[path] = kinds.get(path, True) and _is_doctest_id(path, name)
    return kinds


def _is_doctest_id(path: str, name: str) -> bool:
    if not path.endswith(".py"):
        return True  # a --doctest-glob text file
    bare = name.split("[", 1)[0]
    return "::" not in name and ("." in bare or bare == PurePosixPath(path).stem)


def doctests(path: str, text: str | None) -> dict[str, list[tuple[str, str, str]]]:
    """Each docstring's (or text file's) doctest examples: name → [(source, want, options)]."""
    if text is None:
        return {}
    import doctest  # here: only a changed file with collected doctests needs it (doctest pulls in unittest, pdb)

    parser = doctest.DocTestParser()

    def examples(doc: str) -> list[tuple[str, str, str]]:
        try:
            return [(e.source, e.want, repr(sorted(e.options.items()))) for e in parser.get_examples(doc)]
        except ValueError as exc:  # malformed doctest: its text is what counts
            return [(doc, str(exc), "")]

    if not path.endswith(".py"):
        found = examples(text)
        return {path: found} if found else {}
    try:
        tree = parsing.parse(text)
    except (SyntaxError, ValueError):
        return {"<unparseable>": [(text, "", "")]} if ">>>" in text else {}
    out: dict[str, list[tuple[str, str, str]]] = {}

    def visit(node: ast.AST, qualname: str) -> None:
        doc = (
            ast.get_docstring(node, clean=False)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            else None
        )
        if doc and ">>>" in doc:
            out[qualname or PurePosixPath(path).stem] = examples(doc)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{qualname}.{child.name}" if qualname else child.name)

    visit(tree, "")
    return out


def changed_doctests(path: str, old: str | None, new: str | None) -> list[str]:
    before, after = doctests(path, old), doctests(path, new)
    return sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))


# ------------------------------------------------------------------------------------- decision


def under_test_dir(path: str) -> bool:
    """`pkg/tests/helpers.py`: a folder named tests or test holds test code, whatever its files' names."""
    return any(part in TEST_DIRS for part in PurePosixPath(path).parts[:-1])


def test_data(opened: dict[str, list[str]], test_patterns: Iterable[str], collected: dict[str, bool]) -> list[str]:
    """The files test code read (a data file only library code reads is the library's own, free to
    fix): `opened` maps each file to the files whose code opened it."""
    patterns = list(test_patterns)

    def is_test_code(path: str) -> bool:
        return is_test_file(path, patterns) or under_test_dir(path) or collected.get(path) is False

    return sorted(path for path, openers in opened.items() if any(is_test_code(by) for by in openers))


def edits_to_test_code(
    files: list[str],
    read_old: Reader,
    read_new: Reader,
    collected: dict[str, bool],
    plugin_files: set[str],
    scripts: set[str],
    test_data: Collection[str] = (),
) -> list[str]:
    """The changed files that are test code by what they do, each with what of it changed."""
    found: list[str] = []
    for path in files:
        old, new = read_old(path), read_new(path)
        kind = harness_kind(path, old, new)
        if kind:
            found.append(f"test harness {kind}")
        elif under_test_dir(path):
            found.append(f"under a test directory {path}")
        elif path in test_data:
            found.append(f"test data {path} (the tests read it at the baseline)")
        elif path in plugin_files:
            found.append(f"pytest plugin {path}")
        elif path in scripts:
            found.append(f"test command script {path}")
        elif path in collected and not collected[path]:
            found.append(f"collected test module {path}")
        elif path in collected:
            names = changed_doctests(path, old, new)
            if names:
                found.append(f"doctest {path} ({', '.join(names[:3])})")
    return found
