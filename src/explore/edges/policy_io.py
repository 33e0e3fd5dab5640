"""The facts decide/policy's verdict needs, read from git and the project's interpreter: the
captured tree's changes with their modes, the files at the commit, the top-level names a new
module may not take, and the tests' import graph (test support).

Every git command names the user's repository (`--git-dir`), never the candidate's worktree, whose
`.git` file and config the candidate may have rewritten, and reads objects only (no filter, textconv,
hook or fsmonitor runs), with no system or global config (gitrepo.worktree_env); the captured tree
is already in the shared object store (`write-tree`)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from ..decide import policy, testcode
from ..model.testfiles import is_test_file
from .gitrepo import GIT, worktree_env

NAMES_SCRIPT = """\
import json, sys
names = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)
try:
    from importlib.metadata import packages_distributions
    names |= {n for n in packages_distributions() if n.isidentifier()}
except Exception:
    pass
print(json.dumps(sorted(names)))
"""


def _git(repo: Path, *args: str) -> bytes:
    done = subprocess.run([*GIT, f"--git-dir={repo}", *args], capture_output=True, timeout=120, env=worktree_env())
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def entries(git_dir: Path, commit: str, tree: str, binary: Iterable[str], links: dict[str, str]) -> list[policy.Entry]:
    """The captured tree's changes against the commit, with git's modes (`diff-tree --raw`)."""
    raw = _git(git_dir, "diff-tree", "-r", "-z", "--raw", "--no-renames", commit, tree).decode(errors="surrogateescape")
    fields = raw.split("\0")
    binaries = set(binary)
    out = []
    for meta, name in zip(fields[0::2], fields[1::2]):
        old_mode, new_mode, _, _, status = meta.lstrip(":").split(" ")
        out.append(policy.Entry(name, status[:1], old_mode, new_mode, name in binaries, links.get(name)))
    return out


@functools.lru_cache(maxsize=8)
def tracked(git_dir: Path, commit: str) -> frozenset[str]:
    listing = _git(git_dir, "ls-tree", "-r", "-z", "--name-only", commit).decode(errors="surrogateescape")
    return frozenset(p for p in listing.split("\0") if p)


class Reserved:
    """The top-level names a new module may not take: the standard library's (explore's own
    interpreter's list, and the project interpreter's) and the installed distributions' as the
    project's interpreter sees them. Asked of that interpreter (run outside the repository, so its
    own files are not asked) only when a candidate adds a top-level name the standard library does
    not have: most never do."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.stdlib = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names)
        self._installed: frozenset[str] | None = None

    def __contains__(self, name: object) -> bool:
        return name in self.stdlib or name in self.installed()

    def installed(self) -> frozenset[str]:
        if self._installed is None:
            names: set[str] = set()
            try:
                done = subprocess.run(
                    [self.python, "-I", "-c", NAMES_SCRIPT],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    cwd=Path(self.python).anchor or "/",
                )
                names = set(json.loads(done.stdout)) if done.returncode == 0 else set()
            except (OSError, ValueError, subprocess.SubprocessError):
                pass
            self._installed = frozenset(names)
        return self._installed


@functools.lru_cache(maxsize=4)
def reserved(python: str) -> Reserved:
    return Reserved(python)


@functools.lru_cache(maxsize=8)
def test_support(
    git_dir: Path, commit: str, test_patterns: tuple[str, ...], collected: frozenset[str]
) -> frozenset[str]:
    """decide/policy.test_support over the Python files at the commit (read in one `cat-file --batch`)."""
    paths = sorted(p for p in tracked(git_dir, commit) if p.endswith(".py"))
    if not paths:
        return frozenset()
    request = "".join(f"{commit}:{p}\n" for p in paths).encode(errors="surrogateescape")
    done = subprocess.run(
        [*GIT, f"--git-dir={git_dir}", "cat-file", "--batch"],
        input=request,
        capture_output=True,
        timeout=300,
        env=worktree_env(),
    )
    sources: dict[str, str] = {}
    data, at = done.stdout, 0
    for path in paths:
        end = data.index(b"\n", at)
        header = data[at:end].split(b" ")
        at = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            sources[path] = data[at : at + size].decode("utf-8", errors="replace")
            at += size + 1
    tests = {p for p in sources if is_test_file(p, test_patterns) or testcode.under_test_dir(p) or p in collected}
    return policy.test_support(sources, tests)
