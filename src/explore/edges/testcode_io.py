"""Whether a candidate's change edits test code, read from disk: the two versions of each changed file
(the commit's, through git, and the worktree's) and the plugin files pytest may load, handed to the
pure rules of decide/testcode."""

from __future__ import annotations

import subprocess
from collections.abc import Collection, Iterable
from pathlib import Path, PurePosixPath

from ..decide import escalation
from ..decide.testcode import (
    CONFIG_FILES,
    collected_files,
    edits_to_test_code,
    module_paths,
    plugin_names,
    script_paths,
)
from .gitrepo import GIT


def reason(
    workdir: Path,
    commit: str,
    files: list[str],
    baseline_ids: Iterable[str],
    test_cmd: str | None,
    test_data: Collection[str] = (),
) -> str | None:
    """Why a candidate's change to `workdir` (from `commit`) edits test code, or None.
    test_data: the files the tests read at the baseline (explore's plugin records them)."""
    read_new = lambda path: read(workdir / path)  # noqa: E731
    read_old = lambda path: git_show(workdir, commit, path)  # noqa: E731
    found = edits_to_test_code(
        files,
        read_old,
        read_new,
        collected_files(baseline_ids),
        plugin_files(workdir, commit),
        script_paths(test_cmd),
        test_data,
    )
    if not found:
        return None
    return f"edits test code: {'; '.join(found[:5])}"


def plugin_files(workdir: Path, commit: str) -> set[str]:
    """Where the modules pytest loads as plugins (`-p NAME`, `pytest_plugins`) may live in the worktree."""
    configs = {p: t for p in CONFIG_FILES if (t := read(workdir / p)) is not None}
    conftests = [t for p in _git_files(workdir, commit, "conftest.py") if (t := read(workdir / p)) is not None]
    return {p for name in plugin_names(configs, conftests) for p in module_paths(name)}


def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def git_show(workdir: Path, commit: str, path: str) -> str | None:
    done = subprocess.run([*GIT, "cat-file", "blob", f"{commit}:{path}"], cwd=workdir, capture_output=True, timeout=60)
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


def _git_files(workdir: Path, commit: str, name: str) -> list[str]:
    done = subprocess.run(
        [*GIT, "ls-tree", "-r", "--name-only", commit], cwd=workdir, capture_output=True, text=True, timeout=60
    )
    return [p for p in done.stdout.splitlines() if PurePosixPath(p).name == name]


def sources(workdir: Path, commit: str) -> escalation.Sources:
    """A candidate's files as it left them (its worktree) and as they were at commit: what its
    removals are judged on (decide/removal.py)."""
    return escalation.Sources(
        before=lambda path: git_show(workdir, commit, path), after=lambda path: read(workdir / path)
    )
