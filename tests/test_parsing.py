"""Parsing is thread-safe: every parse of explore goes through decide/parsing, one at a time.

CPython's parser keeps a recursion counter in the interpreter's state (gh-106905): on a worker thread
beside other parses, a candidate's file came back as `SystemError: AST constructor recursion depth
mismatch` and the candidate as crashed (youtube-dl, bug 17)."""

from __future__ import annotations

import ast
import sys
import threading
from pathlib import Path

from explore.decide import parsing

SRC = Path(__file__).resolve().parents[1] / "src" / "explore"

SOURCE = (
    "x = "
    + "(" * 60
    + "1"
    + ")" * 60
    + "\n"
    + "\n".join(f"def f{i}(a, b=[1, 2, {{3: 4}}]):\n    return [a + b for a in range({i}) if a]" for i in range(100))
)


class _Garbage:
    """A cycle with a finaliser: a collection during a parse runs Python code, and the thread switches."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        sum(range(50))


def test_parses_on_many_threads_never_raise_system_error() -> None:
    """Six threads parse a nested module 100 times each while making garbage whose collection
    switches threads mid-parse. With ast.parse in place of parsing.parse, Python 3.11 raised the
    SystemError 29 times in 600 parses here (3.12.1 and 3.13 did not)."""
    errors: list[BaseException] = []
    interval = sys.getswitchinterval()

    def work() -> None:
        for _ in range(100):
            for _ in range(300):
                _Garbage()
            try:
                parsing.parse(SOURCE)
            except SystemError as error:
                errors.append(error)

    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []


def test_every_parse_of_explore_goes_through_the_one_lock() -> None:
    """No module of explore calls ast.parse (or compiles an ast tree) but decide/parsing.py; the
    plugin runs in the project's own single process and is left out."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == "decide/parsing.py" or rel.startswith("pytest_plugin/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            parses = isinstance(func, ast.Attribute) and func.attr in ("parse", "literal_eval") and _is_ast(func.value)
            compiles_tree = (
                isinstance(func, ast.Name) and func.id == "compile" and node.args and _not_text(node.args[0])
            )
            if parses or compiles_tree:
                found.append(f"{rel}:{node.lineno}")
    assert found == []


def _is_ast(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "ast"


def _not_text(node: ast.expr) -> bool:
    """A compile() argument that may be an ast tree: anything but a name read from a file's text."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parse"


def test_parse_is_ast_parse() -> None:
    assert ast.dump(parsing.parse("a = b + 1\n")) == ast.dump(ast.parse("a = b + 1\n"))
    assert isinstance(parsing.parse_expression("a.b(1)"), ast.Call)
