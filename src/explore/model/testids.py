"""A test's id, the same in every tree it runs in.

pytest builds a parametrized test's id from its parameters' values, and some suites parametrize by
absolute paths of their own files (httpie's `test_docs.py`: one test per `.rst` file, its id holding
`os.path.join(root, filename)`). Such an id names the folder the suite ran in: the baseline's
worktree, each candidate's, the user's checkout. explore compares tests by id across those trees,
so the tree's root is replaced by TREE where a run's results are read (`edges/testing`), and put
back where ids go to a test process (`localise`). Every id explore keeps, reports and compares is
the normalised one."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

TREE = "<repo>"
"""Stands for the root of the tree a test ran in, inside its id (read: the repository's root)."""


def _pattern(roots: Iterable[str]) -> re.Pattern[str] | None:
    """A root as a whole path: not the start of a longer name (`/w/a` is not in `/w/ab/x`); only
    absolute roots other than `/` (a relative one would match any word)."""
    found = sorted({r.rstrip("/") for r in roots if r.startswith("/") and r.strip("/")}, key=len, reverse=True)
    if not found:
        return None
    return re.compile("(?:" + "|".join(re.escape(r) for r in found) + r")(?![\w.~-])")


def normaliser(roots: Iterable[str]) -> Callable[[str], str]:
    """The function that normalises ids of a tree with these roots (its absolute path as given and
    resolved): each root, as a whole path, replaced by TREE."""
    pattern = _pattern(roots)
    if pattern is None:
        return lambda test_id: test_id
    return lambda test_id: pattern.sub(TREE, test_id)


def normalise(test_id: str, roots: Iterable[str]) -> str:
    """test_id as read in a tree with these roots, with each root replaced by TREE."""
    return normaliser(roots)(test_id)


def localise(test_id: str, root: str) -> str:
    """A normalised id as pytest knows it in the tree at root (the inverse of normalise)."""
    return test_id.replace(TREE, root.rstrip("/")) if TREE in test_id else test_id
