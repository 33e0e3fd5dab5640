"""The one place explore parses Python into an AST: `parse`, serialised by one lock.

CPython's conversion between its parser's tree and the `ast` module's objects keeps a recursion
counter in the interpreter's state, not the thread's (CPython issue gh-106905, seen up to 3.12): two
threads parsing at once corrupt it, and a parse fails with `SystemError: AST constructor recursion
depth mismatch`. explore parses on worker threads (the checks of each candidate run through anyio's
threads while the event loop and other candidates parse too), so a candidate's right patch could come
back as a crash. Every `ast.parse` of explore goes through here: one parse at a time in the process,
and a `SystemError` that still escapes (a parse by a library explore does not control, on another
thread) is retried once rather than reported as the candidate's failure. Compiling source text
(`compile(text, ...)` to code) does not build `ast` objects and needs no lock; compiling an `ast`
tree does, and has none in explore.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal

_LOCK = threading.Lock()
"""Held for each parse: CPython supports one parse at a time per interpreter."""


def parse(source: str | bytes, filename: str = "<unknown>", mode: Literal["exec", "eval"] = "exec") -> ast.Module:
    """ast.parse(source), one at a time in this process; SyntaxError as ast.parse raises it."""
    tree = _parse(source, filename, mode)
    assert isinstance(tree, ast.Module)
    return tree


def parse_expression(source: str | bytes, filename: str = "<unknown>") -> ast.expr:
    """The expression of ast.parse(source, mode="eval"), one at a time in this process."""
    tree = _parse(source, filename, "eval")
    assert isinstance(tree, ast.Expression)
    return tree.body


def _parse(source: str | bytes, filename: str, mode: str) -> ast.AST:
    with _LOCK:
        try:
            return ast.parse(source, filename, mode)
        except SystemError:  # the interpreter's parser state disturbed by a parse outside explore
            return ast.parse(source, filename, mode)
