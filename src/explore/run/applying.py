"""A run's repair into the user's tree and back out: the end-of-run fast-forward, `explore apply`
and `explore undo`. The repair is the run's own commits (base_commit..result), never the snapshot
of a dirty tree; uncommitted work stays uncommitted; a conflict changes nothing."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import git

from ..edges import gitrepo
from ..model.errors import UsageError
from ..model.runstate import Application, RunState
from . import state

DIFF_FILE = "repair.diff"
APPLIED_FILE = "applied.diff"


def run_tip(repo: git.Repo, run: RunState) -> str | None:
    """Where the run's refs point: its hidden ref, else its branch (a run from before the hidden ref)."""
    return gitrepo.ref_commit(repo, gitrepo.run_ref(run.run_id)) or (
        gitrepo.branch_commit(repo, run.branch) if run.branch else None
    )


def result_commit(repo: git.Repo, run: RunState) -> str | None:
    """The run's result: where its refs point, else what the state recorded."""
    return run_tip(repo, run) or run.merged_commit


def restore_refs(repo: git.Repo, run: RunState) -> None:
    """On resume: the hidden ref and the branch exist again (removed by hand or by an old clean)."""
    tip = run_tip(repo, run) or run.current_commit
    if not gitrepo.ref_commit(repo, gitrepo.run_ref(run.run_id)):
        gitrepo.set_ref(repo, gitrepo.run_ref(run.run_id), tip)
    if run.branch and not gitrepo.branch_commit(repo, run.branch):
        gitrepo.set_branch(repo, run.branch, tip)


def move_run(repo: git.Repo, run: RunState, commit: str, old: str | None = None) -> None:
    """The run's result moves: its hidden ref (checked against old), and its branch while it has one
    — together, in one git transaction: a run stopped at any point never has them disagree."""
    updates: list[tuple[str, str, str | None]] = [(gitrepo.run_ref(run.run_id), commit, old)]
    if run.branch:
        updates.append((f"refs/heads/{run.branch}", commit, None))
    gitrepo.set_refs(repo, updates)


@dataclass(frozen=True)
class Change:
    """What a run changed: the repair's unified diff against the commit it repaired (a dirty tree's
    snapshot excluded), its files and line counts, where the full diff is, and the one command that
    takes it back out (or brings it in)."""

    diff: str
    files: list[str]
    added: int
    removed: int
    path: Path
    command: str

    def headline(self) -> str:
        return (
            f"changed {len(self.files)} file{'s' * (len(self.files) != 1)} (+{self.added} -{self.removed}): "
            f"{', '.join(self.files)}"
        )


def change(info: gitrepo.RepoInfo, run: RunState) -> Change | None:
    """The run's change, its full diff written to the run's folder; None when nothing was merged."""
    if not run.merged_commit or run.merged_commit == run.base_commit:
        return None
    span = (run.base_commit, run.merged_commit)
    raw = _diff_bytes(info.repo, *span, binary=False)
    files, added, removed = [], 0, 0
    for line in info.repo.git.diff("--numstat", "--no-renames", *span).splitlines():
        plus, minus, name = line.split("\t", 2)
        files.append(name)
        added += int(plus) if plus.isdigit() else 0
        removed += int(minus) if minus.isdigit() else 0
    path = state.run_dir(info.root, run.run_id) / DIFF_FILE
    path.write_bytes(raw)  # as git wrote it, whatever the files' encoding
    diff = raw.decode("utf-8", errors="replace")
    command = (
        f"undo it with: explore undo {run.run_id}" if run.application else f"take it with: explore apply {run.run_id}"
    )
    return Change(diff=diff, files=files, added=added, removed=removed, path=path, command=command)


def fast_forward(info: gitrepo.RepoInfo, run: RunState) -> tuple[Application | None, str]:
    """The end of a run: the user's branch moves to the result when it has not moved and the tree
    is clean (never for a dirty tree's run: its result holds the snapshot). Applied, the run's
    branch is deleted (its commits stay under its hidden ref): the caller records the Application
    and that the run has no branch any more. Not applied: why."""
    tip = result_commit(info.repo, run) or run.current_commit
    if run.dirty:
        return None, "the tree had uncommitted changes"
    applied, why = gitrepo.fast_forward(info, run.start_commit, tip)
    if not applied:
        return None, why
    if run.branch:
        gitrepo.delete_branch(info.repo, run.branch)
    return Application(mode="fast_forward", branch=info.branch, before=run.start_commit, after=tip), why


def apply(info: gitrepo.RepoInfo, run: RunState) -> str:
    """`explore apply`: a fast-forward when the tree is clean and unmoved, otherwise the repair
    merged three-way into the working tree, uncommitted. On a conflict nothing is touched; a HEAD
    that is no longer the commit the run started from (the branch moved, another branch) is refused."""
    _not_running(run)
    tip = result_commit(info.repo, run)
    if not run.merged_commit or not tip or tip == run.base_commit:
        raise UsageError(f"run {run.run_id} merged nothing: there is no repair to apply")
    if run.application is not None:
        raise UsageError(
            f"run {run.run_id} is already applied ({_where(run.application)}); undo it with: explore undo {run.run_id}"
        )
    repo = info.repo
    if _is_ancestor(repo, tip, info.head) and not run.dirty:
        raise UsageError(f"{info.branch} already holds the result of run {run.run_id} ({tip[:10]})")
    if run.start_commit and info.head != run.start_commit:
        raise UsageError(_moved(info, run, tip))
    if (
        not run.dirty
        and info.branch == run.start_branch
        and info.head == run.start_commit
        and not gitrepo.is_dirty(repo)
    ):
        application, why = fast_forward(info, run)
        if application is not None:
            run.application, run.applied, run.branch = application, True, None
            state.save(info.root, run)
            return f"fast-forwarded {info.branch} to {tip[:10]}; undo with: explore undo {run.run_id}"
        raise UsageError(f"cannot fast-forward {info.branch}: {why}")
    mine = gitrepo.snapshot(repo, info.head, parent=run.base_commit)  # the tree as it stands, on the run's base
    merged, conflicts = _merge_tree(repo, mine, tip)
    if conflicts:
        raise UsageError(
            f"the repair of run {run.run_id} conflicts with your changes in {', '.join(conflicts)}; nothing was changed. "
            f"Commit or stash them (git stash), run `explore apply {run.run_id}` again, then `git stash pop`; "
            f"the repair alone: git diff {run.base_commit[:10]} {tip[:10]}"
        )
    patch_path = state.run_dir(info.root, run.run_id) / APPLIED_FILE
    patch_path.parent.mkdir(parents=True, exist_ok=True)
    patch = _diff_bytes(repo, f"{mine}^{{tree}}", merged)
    if not patch.strip():
        raise UsageError(f"your working tree already holds the repair of run {run.run_id}: nothing to apply")
    patch_path.write_bytes(patch)
    _git_apply(info.root, patch_path)
    run.application, run.applied = (
        Application(mode="working_tree", branch=info.branch, before=info.head, after=info.head, patch=str(patch_path)),
        True,
    )
    _forget_branch(repo, run)
    state.save(info.root, run)
    return (
        f"applied the repair of run {run.run_id} to your working tree, uncommitted (your own changes are kept): "
        f"review with `git diff`, commit when ready; undo with: explore undo {run.run_id}"
    )


def undo(info: gitrepo.RepoInfo, run: RunState) -> str:
    """`explore undo`: the user's branch (or files) back where the run found them, when nothing
    was built on top and the branch has not moved since; refuses, saying why, otherwise."""
    _not_running(run)
    app = run.application
    if app is None:
        raise UsageError(
            f"run {run.run_id} is not applied to your tree: nothing to undo (its result: {gitrepo.run_ref(run.run_id)})"
        )
    repo = info.repo
    if info.branch != app.branch:
        raise UsageError(
            f"run {run.run_id} was applied to {app.branch}, you are on {info.branch}: `git switch {app.branch}`, then undo"
        )
    if app.mode == "fast_forward":
        if info.head != app.after:
            if _is_ancestor(repo, app.after, info.head):
                count = repo.git.rev_list("--count", f"{app.after}..{info.head}")
                raise UsageError(
                    f"you committed on top of the run's result ({count} commit(s) since {app.after[:10]}): undo would drop them. "
                    f"Revert the run's commits instead: git revert --no-edit {app.before[:10]}..{app.after[:10]}"
                )
            raise UsageError(f"{app.branch} no longer points at the run's result {app.after[:10]}: nothing undone")
        try:
            repo.git.reset("--keep", app.before)  # keeps uncommitted work, refuses when it would be overwritten
        except git.GitCommandError as exc:
            raise UsageError(
                f"cannot move {app.branch} back: {_first_error(exc)}; commit or stash your changes, then undo"
            ) from None
        done = f"{app.branch} back at {app.before[:10]}, where run {run.run_id} found it"
    else:
        if info.head != app.after:
            raise UsageError(
                f"{app.branch} moved since the repair of run {run.run_id} was applied to its files "
                f"({app.after[:10]}, now {info.head[:10]}); nothing undone. If you committed the repair, "
                f"`git revert` that commit; the repair alone, to reverse by hand: {app.patch}"
            )
        patch = Path(app.patch or "")
        check = subprocess.run(
            ["git", "apply", "-R", "--check", str(patch)], cwd=info.root, capture_output=True, text=True
        )
        if not patch.is_file() or check.returncode != 0:
            raise UsageError(
                f"the files run {run.run_id} changed were edited since it was applied; nothing undone. "
                f"Its repair, to reverse by hand: {patch}"
            )
        _git_apply(info.root, patch, reverse=True)
        done = f"the repair of run {run.run_id} taken out of your working tree (your own changes are kept)"
    run.application, run.applied = None, False
    state.save(info.root, run)
    return f"{done}; bring it back with: explore apply {run.run_id}"


def _moved(info: gitrepo.RepoInfo, run: RunState, tip: str) -> str:
    """Why apply refuses a tree whose HEAD is no longer the commit the run started from: its repair
    was tested there, not on what the user has now; what to do instead."""
    start = run.start_commit
    if info.branch != run.start_branch:
        here, there = info.branch or "a detached HEAD", run.start_branch or "a detached HEAD"
        where = f"you are on {here} ({info.head[:10]}), the run started from {there} at {start[:10]}"
    elif _is_ancestor(info.repo, start, info.head):
        count = info.repo.git.rev_list("--count", f"{start}..{info.head}")
        where = f"{info.branch} moved since the run started: {count} commit(s) on top of {start[:10]}"
    else:
        where = f"{info.branch} moved since the run started: {start[:10]} then, {info.head[:10]} now"
    return (
        f"{where}. Run {run.run_id}'s repair was tested on {start[:10]}, not on what you have now; nothing was "
        f"changed. Take it as a merge you review: git merge {gitrepo.run_ref(run.run_id)} "
        f"(its diff alone: git diff {run.base_commit[:10]} {tip[:10]}), or start a new run on your branch"
    )


def _forget_branch(repo: git.Repo, run: RunState) -> None:
    """An applied run keeps no visible branch: its commits stay under its hidden ref."""
    if run.branch:
        gitrepo.delete_branch(repo, run.branch)
        run.branch = None


def _where(app: Application) -> str:
    return (
        f"{app.branch} fast-forwarded to {app.after[:10]}"
        if app.mode == "fast_forward"
        else f"in the working tree on {app.branch}"
    )


def _not_running(run: RunState) -> None:
    if run.status == "running" and state.pid_alive(run.pid or -1):
        raise UsageError(f"run {run.run_id} is still running (pid {run.pid}); wait for it or stop it first")


def _is_ancestor(repo: git.Repo, older: str, newer: str) -> bool:
    try:
        repo.git.merge_base("--is-ancestor", older, newer)
        return True
    except git.GitCommandError:
        return False


def _merge_tree(repo: git.Repo, mine: str, theirs: str) -> tuple[str, list[str]]:
    """A real three-way merge (their common ancestor: the run's base) written as objects only:
    (merged tree, conflicting paths)."""
    status, out, _ = repo.git.execute(
        ["git", "merge-tree", "--write-tree", "--name-only", "--no-messages", mine, theirs],
        with_extended_output=True,
        with_exceptions=False,
    )
    lines = out.splitlines()
    if status not in (0, 1) or not lines:
        raise UsageError(f"git merge-tree failed ({status}): {out or 'no output'}")
    return lines[0], sorted(set(line for line in lines[1:] if line.strip()))


def _diff_bytes(repo: git.Repo, old: str, new: str, binary: bool = True) -> bytes:
    """git diff old new as bytes: --binary for a patch to apply, plain for people to read."""
    out: bytes = repo.git.execute(
        ["git", "diff", *(["--binary", "--no-renames"] if binary else []), "--no-color", "--no-ext-diff", old, new],
        strip_newline_in_stdout=False,
        stdout_as_string=False,
    )
    return out


def _git_apply(root: Path, patch: Path, reverse: bool = False) -> None:
    """The patch onto the files only (never the index); all or nothing."""
    done = subprocess.run(
        ["git", "apply", "--whitespace=nowarn", *(["-R"] if reverse else []), str(patch)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise UsageError(f"git apply {'-R ' if reverse else ''}{patch} failed, nothing changed: {done.stderr.strip()}")


def _first_error(exc: git.GitCommandError) -> str:
    text = str(exc.stderr or exc).strip().strip("'").strip()
    return text.splitlines()[0].removeprefix("stderr: ").strip("'") if text else "git refused"
