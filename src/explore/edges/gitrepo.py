"""The user's repository: checks, snapshot of a dirty tree, commits made without touching the
user's index or files, the run branch and the final fast-forward.

Every git command explore runs is inert (`GIT`, `inert`): no hook and no fsmonitor runs, so
nothing a candidate planted in the shared git dir runs under explore's name. Diffs explore reads
(`DIFF`) show the bytes git commits, whatever `.gitattributes` (`-diff`, textconv) says.

explore's git reading a candidate's worktree (`reader_dir`, `worktree_git`, `worktree_env`: the
one policy, used by edges/worktrees) trusts nothing a candidate could have written: its git dir is
explore's own (`reader_dir`: the repository's config and info/exclude as they were before any
candidate ran, the shared object store), never the worktree's admin folder (its `config.worktree`,
`commondir`, index) nor the shared config a candidate outside a sandbox could have given a filter
or an fsmonitor; it uses explore's own index of the worktree, reads no system or global config, and
turns off hooks, fsmonitor, sparse checkout, automatic gc and maintenance. Attributes come from
explore's own `info/attributes` in that git dir (`reader_attributes`), which git ranks above every
`.gitattributes` of the tree: first a line that leaves every attribute git acts on (filter, diff,
merge, text, eol, ident, working-tree-encoding) unspecified for every path, then the user's own
attributes as the commit the run started from has them — so a `.gitattributes` a candidate wrote
can name no filter, textconv, diff driver or conversion that explore's git would apply.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import git

from ..model.errors import UsageError
from . import trust
from .gitcmd import GIT as GIT
from .gitcmd import INERT as INERT

FALLBACK_NAME = "explore"
FALLBACK_EMAIL = "explore@localhost"
WORKTREE_READING = (
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "core.sparseCheckout=false",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
)
"""Beyond INERT, for explore's git in a candidate's worktree (worktree_git)."""
DIFF_ARGS = ("-c", "core.attributesFile=/dev/null", "diff", "--no-color", "--no-textconv", "--no-ext-diff")
DIFF = (*GIT, *DIFF_ARGS)
"""A diff explore reads: no textconv, no external diff, no global attributes (add `--text` to see
files `.gitattributes` marks `-diff` or binary as the text they are)."""
GENERATED_IGNORES = "__pycache__/\n*.py[cod]\n.pytest_cache/\n.coverage\n.coverage.*\n*.egg-info/\n.mypy_cache/\n.ruff_cache/\n.explore/\n"
"""Never part of a candidate's diff, even in a project without a .gitignore."""


@dataclass
class RepoInfo:
    repo: git.Repo
    root: Path
    branch: str
    head: str


def reader_dir(folder: Path, common_dir: Path, commit: str) -> Path:
    """explore's own git dir for reading candidates' worktrees, made once in folder (which no
    candidate may write) before any candidate runs: a copy of the repository's config and
    info/exclude, its attributes (reader_attributes), an empty refs/, HEAD at commit; its objects
    are the shared store's (worktree_env's GIT_OBJECT_DIRECTORY)."""
    if not (folder / "HEAD").is_file():
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "info").mkdir(exist_ok=True)
        for name in ("config", "info/exclude"):
            if (common_dir / name).is_file():
                (folder / name).write_bytes((common_dir / name).read_bytes())
        (folder / "info" / "attributes").write_bytes(reader_attributes(common_dir, commit))
        (folder / "HEAD").write_text(f"{commit}\n")
    return folder


NEUTRAL_ATTRIBUTES = b"* !filter !diff !merge !text !eol !crlf !ident !working-tree-encoding\n"
"""Every attribute by which git runs a command or changes bytes on their way in or out, left
unspecified for every path: what no `.gitattributes` of a candidate's tree can then set."""


def reader_attributes(common_dir: Path, commit: str) -> bytes:
    """The attributes explore's git reads in a candidate's worktree: NEUTRAL_ATTRIBUTES, then every
    `.gitattributes` of commit (a folder's own patterns made relative to the root; deeper folders
    later, as git ranks them), then the user's `info/attributes` — never a file of the worktree."""
    listed = _git_at(common_dir, "ls-tree", "-r", "-z", commit).decode("utf-8", "surrogateescape")
    found: list[tuple[str, str]] = []
    for line in filter(None, listed.split("\0")):
        meta, _, name = line.partition("\t")
        if name == ".gitattributes" or name.endswith("/.gitattributes"):
            found.append((name, meta.split(" ")[2]))
    parts = [NEUTRAL_ATTRIBUTES]
    for name, sha in sorted(found, key=lambda item: item[0].count("/")):
        data = _git_at(common_dir, "cat-file", "blob", sha)
        if object_id(b"blob", data) != sha:
            raise RuntimeError(f"object {sha} ({name}) does not hold what its id says: the object store was rewritten")
        parts.append(_rooted(data, name.removesuffix(".gitattributes")))
    own = common_dir / "info" / "attributes"
    if own.is_file():
        parts.append(own.read_bytes().rstrip(b"\n") + b"\n")
    return b"".join(parts)


def _rooted(data: bytes, folder: str) -> bytes:
    """A folder's `.gitattributes` lines with their patterns relative to the repository's root (a
    pattern without a slash matches a name at any depth under the folder; macros count only at the root)."""
    if not folder:
        return data.rstrip(b"\n") + b"\n"
    lines = []
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        pattern, _, rest = line.strip().partition(" ")
        if not pattern or pattern.startswith(("#", "[attr]", '"')):
            continue
        rooted = f"{folder}{pattern.lstrip('/')}" if "/" in pattern else f"{folder}**/{pattern}"
        lines.append(f"{rooted} {rest}\n")
    return "".join(lines).encode("utf-8", "surrogateescape")


def object_id(kind: bytes, data: bytes) -> str:
    """The id git gives an object of this kind and content."""
    return hashlib.sha1(kind + b" " + str(len(data)).encode() + b"\0" + data).hexdigest()


def _git_at(git_dir: Path, *args: str) -> bytes:
    done = subprocess.run([*GIT, f"--git-dir={git_dir}", *args], capture_output=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"git {args[0]} in {git_dir} failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
    return done.stdout


def worktree_git(git_dir: Path, worktree: Path, *args: str) -> list[str]:
    """The argv of explore's git reading the candidate's worktree at worktree through git_dir (a
    reader_dir; see the module's docstring): run it with worktree_env."""
    return [*GIT, *WORKTREE_READING, f"--git-dir={git_dir}", f"--work-tree={worktree}", *args]


def worktree_env(index: Path | None = None, objects: Path | None = None) -> dict[str, str]:
    """The environment of explore's git in a candidate's worktree: explore's index and the shared
    object store (when given), no system or global config (a candidate outside a sandbox can write
    the home), no system attributes, no prompt, no optional lock; none of the user's GIT_* variables."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {
        **keep,
        **({"GIT_INDEX_FILE": str(index)} if index is not None else {}),
        **({"GIT_OBJECT_DIRECTORY": str(objects)} if objects is not None else {}),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
    }


def inert(repo: git.Repo) -> git.Repo:
    """repo, with every command GitPython runs for it made inert (INERT)."""
    repo.git.set_persistent_git_options(c=[INERT[1], INERT[3]])
    return repo


def open_repo(path: Path) -> RepoInfo:
    """The repository at path, refusing states in which a run could not be safe."""
    if not path.exists():
        raise UsageError(f"{path}: no such directory")
    try:
        repo = inert(git.Repo(path, search_parent_directories=True))
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UsageError(f"{path} is not a git repository (run `git init` and commit your code first)") from None
    if repo.bare:
        raise UsageError(f"{path} is a bare repository: run explore in a clone with a working tree")
    root = Path(repo.working_tree_dir or path).resolve()
    try:
        head = repo.head.commit.hexsha
    except ValueError:
        raise UsageError(f"{root} has no commits yet: commit your code, then run explore") from None
    git_dir = Path(repo.git_dir)
    for marker, what in (
        ("MERGE_HEAD", "a merge"),
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
        ("REVERT_HEAD", "a revert"),
    ):
        if (git_dir / marker).exists():
            raise UsageError(f"{root} has {what} in progress: finish or abort it, then run explore")
    if repo.head.is_detached:
        raise UsageError(f"{root} is on a detached HEAD: check out a branch (`git switch -c NAME`) and run again")
    return RepoInfo(repo=repo, root=root, branch=repo.active_branch.name, head=head)


def identity_env(repo: git.Repo) -> dict[str, str]:
    """The user's git identity when configured, else `explore <explore@localhost>`."""
    name, email = os.environ.get("GIT_AUTHOR_NAME"), os.environ.get("GIT_AUTHOR_EMAIL")
    configured = {} if name and email else _identity(repo)
    name = name or configured.get("user.name") or FALLBACK_NAME
    email = email or configured.get("user.email") or FALLBACK_EMAIL
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def _identity(repo: git.Repo) -> dict[str, str]:
    """user.name and user.email as `git config --get` reads each (the last value wins), in one git
    process: through git itself, so GIT_CONFIG_GLOBAL and includes are honoured."""
    try:
        listed = str(repo.git.config("--null", "--get-regexp", r"^user\.(name|email)$"))
    except git.GitCommandError:  # neither is set
        return {}
    found: dict[str, str] = {}
    for entry in filter(None, listed.split("\0")):
        key, _, value = entry.partition("\n")
        found[key] = value.strip()
    return found


def exclude_explore_dir(repo: git.Repo) -> None:
    """`.explore/` is never committed: list it in .git/info/exclude once."""
    exclude_path(repo, ".explore/")


def exclude_path(repo: git.Repo, entry: str) -> None:
    """List entry in .git/info/exclude once: what explore writes there never makes the tree dirty."""
    exclude = Path(repo.common_dir) / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    current = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if entry not in current.split():
        with exclude.open("a", encoding="utf-8") as handle:
            handle.write(("" if current.endswith("\n") or not current else "\n") + entry + "\n")


def ignores_file(repo: git.Repo, text: str | None = None) -> Path:
    """The excludes file a candidate's capture uses: the user's own global excludes file (it stays
    in force: an `.env` ignored only there is never committed) followed by GENERATED_IGNORES.
    text: ignores_text(repo) as the caller read it before (a run reads it once); the file is
    written again whenever it does not hold it."""
    path = Path(repo.common_dir) / "explore-ignores"
    text = ignores_text(repo) if text is None else text
    if not path.exists() or path.read_text(errors="replace") != text:
        path.write_text(text)
    return path


def ignores_text(repo: git.Repo) -> str:
    """What ignores_file holds (asks git where the user's global excludes file is: a git process)."""
    return _global_excludes(repo) + "\n" + GENERATED_IGNORES


def _global_excludes(repo: git.Repo) -> str:
    """The text of the excludes file git uses for this repository (core.excludesFile, else
    $XDG_CONFIG_HOME/git/ignore), or "" when there is none."""
    try:
        configured = repo.git.config("--type=path", "--get", "core.excludesFile").strip()
    except git.GitCommandError:
        configured = ""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = Path(configured) if configured else Path(base) / "git" / "ignore"
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def is_dirty(repo: git.Repo) -> bool:
    """Tracked changes or untracked files that are not ignored."""
    return bool(repo.git.status("--porcelain", "--untracked-files=all").strip())


def _with_temp_index(repo: git.Repo, action: Callable[[dict[str, str]], str]) -> str:
    with tempfile.TemporaryDirectory(prefix="explore-index-") as folder:
        env = {"GIT_INDEX_FILE": str(Path(folder) / "index")}
        return action(env)


def snapshot(repo: git.Repo, head: str, parent: str | None = None) -> str:
    """A commit of the working tree as it stands (tracked changes and untracked, not ignored
    files) on parent (default: head), made through a temporary index: the user's index and files
    are not touched."""

    def make(env: dict[str, str]) -> str:
        repo.git.read_tree(head, env=env)
        with _store(repo).writing():
            repo.git.add("-A", env=env)
            tree = repo.git.write_tree(env=env)
            made = str(
                repo.git.commit_tree(
                    tree,
                    "-p",
                    parent or head,
                    "-m",
                    "explore: snapshot of uncommitted work",
                    env={**env, **identity_env(repo)},
                )
            )
            _wrote(repo, made, tree, head)
        return made

    return _with_temp_index(repo, make)


def _store(repo: git.Repo) -> trust.Store:
    return trust.store(Path(repo.common_dir))


def _wrote(repo: git.Repo, commit: str, tree: str, base: str) -> None:
    """commit and tree (what base does not hold of it) recorded as explore's writes (trust.Store)."""
    _store(repo).wrote(commit)
    _store(repo).wrote_tree(tree, base)


class TreeMismatch(Exception):
    """The commit built from a candidate's patch is not the tree its tests ran on."""


def commit_patch(repo: git.Repo, parent: str, patch: bytes, message: str, tested_tree: str | None = None) -> str:
    """Commit parent + patch (the bytes held since before the tests ran, never a file read back)
    without a checkout (temporary index), returning the new sha. tested_tree: the tree the tests
    ran on; a commit whose tree differs is refused (TreeMismatch) before any ref points at it."""

    def make(env: dict[str, str]) -> str:
        with _store(repo).writing():
            return _make(env)

    def _make(env: dict[str, str]) -> str:
        repo.git.read_tree(parent, env=env)
        if patch:
            done = subprocess.run(
                [*GIT, "apply", "--cached", "--binary", "--whitespace=nowarn", "-"],
                cwd=repo.working_tree_dir or repo.git_dir,
                input=patch,
                capture_output=True,
                env={**os.environ, **env},
            )
            if done.returncode != 0:
                raise git.GitCommandError(["git", "apply", "--cached"], done.returncode, done.stderr)
        tree = repo.git.write_tree(env=env)
        if tested_tree is not None and tree != tested_tree:
            raise TreeMismatch(f"the commit's tree {tree[:10]} is not the tested tree {tested_tree[:10]}")
        made = str(repo.git.commit_tree(tree, "-p", parent, "-m", message, env={**env, **identity_env(repo)}))
        _wrote(repo, made, tree, parent)
        return made

    return _with_temp_index(repo, make)


def commit_tree(repo: git.Repo, tree: str, parent: str, message: str) -> str:
    """A commit of tree on parent that no ref points at (a checkout of exactly that tree)."""
    with _store(repo).writing():
        made = str(repo.git.commit_tree(tree, "-p", parent, "-m", message, env=identity_env(repo)))
        _wrote(repo, made, tree, parent)
    return made


RUNS_NAMESPACE = "refs/explore/runs/"
"""Where each run keeps its result: a ref `git branch` does not list, so an applied run leaves no
visible branch while `explore undo`, `apply` and `resume` still find its commits."""


def run_ref(run_id: str) -> str:
    return f"{RUNS_NAMESPACE}{run_id}"


def set_ref(repo: git.Repo, ref: str, commit: str, old: str | None = None) -> None:
    repo.git.update_ref(ref, commit, *([old] if old else []))


def set_refs(repo: git.Repo, updates: list[tuple[str, str, str | None]]) -> None:
    """Refs moved (ref, commit, the commit it must point at now or None) in one git process and one
    transaction: all move or none does — an `old` that does not match, or a ref git cannot lock,
    fails them all (GitCommandError)."""
    script = "".join(f"update {ref} {commit}{f' {old}' if old else ''}\n" for ref, commit, old in updates)
    done = subprocess.run(
        [*GIT, "update-ref", "--stdin"],
        cwd=repo.working_tree_dir or repo.git_dir,
        input=script.encode(),
        capture_output=True,
    )
    if done.returncode != 0:
        raise git.GitCommandError(["git", "update-ref", "--stdin"], done.returncode, done.stderr)


def delete_ref(repo: git.Repo, ref: str) -> None:
    try:
        repo.git.update_ref("-d", ref)
    except git.GitCommandError:
        pass


def ref_commit(repo: git.Repo, ref: str) -> str | None:
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}") or None
    except git.GitCommandError:
        return None


def set_branch(repo: git.Repo, name: str, commit: str, old: str | None = None) -> None:
    set_ref(repo, f"refs/heads/{name}", commit, old)


def delete_branch(repo: git.Repo, name: str) -> None:
    delete_ref(repo, f"refs/heads/{name}")


def branch_commit(repo: git.Repo, name: str) -> str | None:
    return ref_commit(repo, f"refs/heads/{name}")


def fast_forward(info: RepoInfo, start_commit: str, target: str) -> tuple[bool, str]:
    """Move the user's branch to target when it has not moved and the tree is clean.

    Returns (applied, why-not)."""
    repo = info.repo
    try:
        current_branch = repo.active_branch.name
    except TypeError:
        return False, "HEAD is detached now"
    if current_branch != info.branch:
        return False, f"you switched from {info.branch} to {current_branch}"
    if repo.head.commit.hexsha != start_commit:
        return False, f"{info.branch} has moved since the run started"
    if is_dirty(repo):
        return False, "the working tree has uncommitted changes"
    clobbered = would_overwrite(
        info.root,
        repo.git.diff("--name-only", "-z", "--no-renames", "--diff-filter=A", start_commit, target).split("\0"),
    )
    if clobbered:
        return False, (
            f"it adds {', '.join(clobbered[:3])}, which would replace your untracked or ignored "
            f"{'file' if len(clobbered) == 1 else 'files'} there; move {'it' if len(clobbered) == 1 else 'them'} away first"
        )
    _store(repo).verify()  # the checkout reads the store: every file changed since last seen is hashed, mended
    repo.git.merge("--ff-only", "--quiet", target, env=identity_env(repo))
    return True, ""


def would_overwrite(root: Path, added: list[str]) -> list[str]:
    """The paths a fast-forward adding `added` would write over in the user's tree: something
    already there (git replaces an ignored file or folder without a word), or a file or symlink
    where the path needs a folder."""
    found = []
    for name in filter(None, added):
        parts = name.split("/")
        parents = [root.joinpath(*parts[:i]) for i in range(1, len(parts))]
        if os.path.lexists(root / name) or any(
            p.is_symlink() or (os.path.lexists(p) and not p.is_dir()) for p in parents
        ):
            found.append(name)
    return found


def resolve_commit(root: Path, ref: str) -> str | None:
    """The commit a revision (sha, branch, tag, HEAD~2…) names in the repository at root, or None."""
    try:
        with inert(git.Repo(root)) as repo:
            return repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}") or None
    except git.GitCommandError:
        return None


def python_files(repo: git.Repo, commit: str) -> list[str]:
    """The Python files of commit's tree, relative to the repository root."""
    return [f for f in repo.git.ls_tree("-r", "--name-only", commit).splitlines() if f.endswith(".py")]
