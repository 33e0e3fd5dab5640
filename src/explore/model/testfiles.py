"""Which paths are test files: the one definition scoring, test selection, mutate, the anthropic
tools (test files read-only) and the bench judge share."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

DEFAULT_TEST_PATTERNS = [
    "tests/**",
    "test/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
    "test_*.py",
    "*_test.py",
    "conftest.py",
]
"""`test-patterns`' default: the files a candidate may not edit."""
CONVENTIONS = ("tests/*", "*/tests/*", "test/*", "*/test/*", "test_*.py", "*_test.py", "conftest.py")
"""The usual layout conventions, whatever a repository configures (mutate's targets, the judge)."""


def is_test_file(path: str, patterns: Iterable[str] = DEFAULT_TEST_PATTERNS) -> bool:
    """path (relative, with /) matches a pattern as a whole or by its file name."""
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(name, pattern) for pattern in patterns)
