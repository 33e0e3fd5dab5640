"""A commit as bytes a remote worker can check out without the user's disk: a git bundle.

The bundle holds one commit with the run commit's tree and no history (a 5,000-file repo's
history is not what a test run needs), made in a throw-away bare repository that borrows the
user's objects: no ref is ever created in the user's repository.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from ..edges.gitrepo import GIT

BUNDLE_REF = "refs/heads/explore-tree"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "explore",
    "GIT_AUTHOR_EMAIL": "explore@localhost",
    "GIT_COMMITTER_NAME": "explore",
    "GIT_COMMITTER_EMAIL": "explore@localhost",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}


def _git(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> str:
    done = subprocess.run([*GIT, *args], cwd=cwd, input=stdin, capture_output=True, env={**os.environ, **_IDENTITY})
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])} failed: {done.stderr.decode(errors='replace').strip()[-500:]}")
    return done.stdout.decode(errors="replace").strip()


def make_bundle(repo_root: Path, commit: str) -> bytes:
    """The tree of commit, as a one-commit git bundle."""
    objects = Path(_git("rev-parse", "--git-common-dir", cwd=repo_root))
    objects = (objects if objects.is_absolute() else repo_root / objects).resolve() / "objects"
    tree = _git("rev-parse", f"{commit}^{{tree}}", cwd=repo_root)
    with tempfile.TemporaryDirectory(prefix="explore-bundle-") as tmp:
        bare = Path(tmp) / "tree.git"
        _git("init", "-q", "--bare", str(bare))
        (bare / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
        made = _git("--git-dir", str(bare), "commit-tree", tree, "-m", f"explore: the tree of {commit}")
        _git("--git-dir", str(bare), "update-ref", BUNDLE_REF, made)
        out = Path(tmp) / "tree.bundle"
        _git("--git-dir", str(bare), "bundle", "create", "-q", str(out), BUNDLE_REF)
        return out.read_bytes()


def checkout(bundle: bytes, dest: Path) -> None:
    """A plain checkout of the bundle's tree at dest (which must not exist)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    source = dest.parent / f"{dest.name}.bundle"
    source.write_bytes(bundle)
    try:
        _git("clone", "-q", "--no-hardlinks", "-b", BUNDLE_REF.removeprefix("refs/heads/"), str(source), str(dest))
    finally:
        source.unlink(missing_ok=True)


def reuse_or_checkout(bundle_data: bytes, commit: str, tree: Path) -> None:
    """tree at the bundle's tree, clean: reset in place when it already holds commit (a worker's
    second job of an iteration), fetched into when it holds another, cloned when absent."""
    stamp = tree.parent / f"{tree.name}.commit"
    if (tree / ".git").is_dir() and stamp.is_file():
        if stamp.read_text(encoding="utf-8") != commit:
            source = tree.parent / f"{tree.name}.bundle"
            source.write_bytes(bundle_data)
            try:
                _git("fetch", "-q", str(source), BUNDLE_REF, cwd=tree)
            finally:
                source.unlink(missing_ok=True)
            _git("reset", "-q", "--hard", "FETCH_HEAD", cwd=tree)
        else:
            _git("reset", "-q", "--hard", "HEAD", cwd=tree)
        _git("clean", "-fdxq", cwd=tree)
    else:
        if tree.exists():
            import shutil

            shutil.rmtree(tree)
        checkout(bundle_data, tree)
    stamp.write_text(commit, encoding="utf-8")


def apply_patch(tree: Path, patch: str) -> None:
    if patch:
        _git(
            "apply",
            "--binary",
            "--whitespace=nowarn",
            "-",
            cwd=tree,
            stdin=patch.encode("utf-8", errors="surrogateescape"),
        )
