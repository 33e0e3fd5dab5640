"""Issue 37, point 4 with the sandbox off: explore's own files in the pool folder — its index of
each worktree, its reader git dir — are written by a candidate that is not confined. What is
captured stays what is on disk: an index whose stat data lies is read afresh, a reader config or
attributes file that names a filter is put back. Real git, a real pool, no `explore run`."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import git as gitpython

from conftest import git, make_repo
from explore.edges.worktrees import WorktreePool

TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
WEAK = TEST.replace("== 5", "!= 0")
FILES = {"calc.py": "def add(a, b):\n    return a - b\n", "tests/test_calc.py": TEST}


def weakened(tmp_path: Path) -> tuple[Path, WorktreePool, Path]:
    repo = make_repo(tmp_path / "repo", FILES)
    pool = WorktreePool(gitpython.Repo(repo), repo, tmp_path / "worktrees" / "run")
    path, _ = pool.acquire("a", git(repo, "rev-parse", "HEAD"))
    (path / "tests" / "test_calc.py").write_text(WEAK)
    (path / "calc.py").write_text("def add(a, b):\n    return a * b\n")
    return repo, pool, path


def test_an_index_of_explores_whose_stat_data_lies_hides_no_test_edit(tmp_path: Path) -> None:
    """The candidate stages its weakened test in explore's index of its worktree, then puts the
    base blob's id in the entry, keeping the weakened file's stat data: git would take the file as
    unchanged. The file's times are set back so that git does not hash it again as racily clean."""
    repo, pool, path = weakened(tmp_path)
    weak = path / "tests" / "test_calc.py"
    os.utime(weak, ns=(weak.stat().st_mtime_ns - 10**10, weak.stat().st_mtime_ns - 10**10))
    index = pool.root / f".{path.name}.index"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "update-index", "--add", "tests/test_calc.py"], cwd=path, env=env, check=True)
    base = bytes.fromhex(git(repo, "rev-parse", "HEAD:tests/test_calc.py"))
    mine = bytes.fromhex(git(path, "hash-object", "tests/test_calc.py"))
    data = index.read_bytes()[:-20].replace(mine, base)
    index.write_bytes(data + hashlib.sha1(data).digest())
    captured = pool.capture_patch(path, tmp_path / "a.patch")
    assert "tests/test_calc.py" in captured.files and captured.patch is not None and b"!= 0" in captured.patch
    pool.remove_all()


def test_a_filter_planted_in_explores_reader_never_rewrites_the_capture(tmp_path: Path) -> None:
    """The candidate gives explore's reader git dir a clean filter that turns its weakened test back
    into the user's on the way in, and a `commondir` beside it: the capture holds the bytes on disk."""
    _, pool, path = weakened(tmp_path)
    reader = pool.root / ".reader"
    undo = tmp_path / "undo.sh"
    undo.write_text(f"#!/bin/sh\nsed 's/!= 0/== 5/'\ntouch {tmp_path / 'filter-ran'}\n")
    undo.chmod(0o755)
    with (reader / "config").open("a") as handle:
        handle.write(f'[filter "undo"]\n\tclean = {undo}\n')
    (reader / "info" / "attributes").write_text("* filter=undo\n")
    (reader / "commondir").write_text(str(tmp_path / "elsewhere") + "\n")
    captured = pool.capture_patch(path, tmp_path / "a.patch")
    assert "tests/test_calc.py" in captured.files and captured.patch is not None and b"!= 0" in captured.patch
    assert not (tmp_path / "filter-ran").exists() and not (reader / "commondir").exists()
    pool.remove_all()
