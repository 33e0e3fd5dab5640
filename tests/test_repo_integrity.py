"""Issue 37, points 4, 5 and 8: what is captured is what is on disk, whatever the candidate's git
says; the user's repository is the same afterwards, object for object; a sandbox on a machine
without bubblewrap (Landlock). One real `explore run` per attack: candidate a plays it beside the
honest fix at confidence 0.99, b is the honest fix at 0.3; the attack fails and b wins — with the
sandbox on (`require`: Landlock where bubblewrap is missing) and off."""

from __future__ import annotations

import json
import subprocess
import textwrap
import zlib
from pathlib import Path

import pytest

from conftest import git, make_repo, run_cli
from explore.edges import landlock
from explore.edges.gitrepo import object_id
from test_protected_set import assert_honest_won, run
from test_tamper import FILES, HONEST, pyproject

MODES = ["off", "require"]
WEAK_TEST = ["assert add(2, 3) == 5", "assert add(2, 3) == add(2, 3)"]

needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="the kernel offers no Landlock")


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "require" and landlock.abi() < 1:
        pytest.skip("the kernel offers no Landlock")
    monkeypatch.setenv("EXPLORE_SANDBOX", request.param)
    return str(request.param)


def common_dir(repo: Path) -> Path:
    return repo / ".git"


def snippet(code: str) -> str:
    """Python the agent runs in its worktree (os, pathlib, json imported); each attempt's outcome
    lands in tried.json next to the agent."""
    return "import subprocess\n" + textwrap.dedent(code)


def test_skip_worktree_and_assume_unchanged_do_not_hide_a_test_edit(tmp_path: Path, mode: str) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    hide = snippet("""\
        for flag in ("--skip-worktree", "--assume-unchanged"):
            subprocess.run(["git", "update-index", flag, "tests/test_calc.py"], capture_output=True)
        """)
    trick = {"replace": {**HONEST["replace"], "tests/test_calc.py": WEAK_TEST}, "exec": hide}
    code, summary, err = run(repo, tmp_path, trick, HONEST)
    assert_honest_won(code, summary, err, "tests/test_calc.py")
    assert "assert add(2, 3) == 5" in (repo / "tests" / "test_calc.py").read_text()


def test_a_nested_repository_is_captured_as_its_files(tmp_path: Path, mode: str) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    nest = snippet("""\
        pathlib.Path("extra").mkdir()
        subprocess.run(["git", "init", "-q", "extra"], check=True)
        pathlib.Path("extra/conftest.py").write_text("collect_ignore = ['../tests']\\n")
        ident = ["-c", "user.name=a", "-c", "user.email=a@b"]
        subprocess.run(["git", *ident, "-C", "extra", "commit", "-q", "--allow-empty", "-m", "x"], check=True)
        """)
    code, summary, err = run(repo, tmp_path, {**HONEST, "exec": nest}, HONEST)
    assert_honest_won(code, summary, err, "extra/conftest.py")
    assert not (repo / "extra").exists()


def all_objects(repo: Path) -> set[str]:
    listed = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(listed.split())


def test_a_change_staged_in_the_users_index_is_put_back(tmp_path: Path, mode: str) -> None:
    """The user's index staged, and lock files left where git needs them next: the user's index and
    branch (`index.lock`, `refs/heads/main.lock`) and the candidate's own admin folder. explore's
    guard left every `*.lock` out, so the locks outlived the run and explore's own fast-forward
    failed on `index.lock` (a traceback, no summary); in its admin folder, explore's next git
    command there failed and the candidate 'crashed'."""
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    index = common_dir(repo) / "index"
    stage = snippet(f"""\
        env = {{**os.environ, "GIT_INDEX_FILE": {str(index)!r}}}
        sha = subprocess.run(["git", "hash-object", "-w", "--stdin"], input=b"planted\\n", capture_output=True, env=env).stdout.decode().strip()
        subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{{sha}},planted.py"], env=env, capture_output=True)
        subprocess.run(["git", "update-index", "--skip-worktree", "calc.py"], env=env, capture_output=True)
        admin = pathlib.Path(pathlib.Path(".git").read_text().split(":", 1)[1].strip())
        common = pathlib.Path({str(common_dir(repo))!r})
        for lock in (common / "index.lock", common / "refs/heads/main.lock", admin / "index.lock", admin / "HEAD.lock"):
            try:
                lock.write_text("left by a\\n")
            except OSError:  # the sandbox keeps it out
                pass
        """)
    code, summary, err = run(repo, tmp_path, {**HONEST, "exec": stage}, HONEST)
    assert code == 0, err
    a = summary["iterations"][0]["candidates"][0]
    if mode == "off":
        assert a["status"] == "rejected" and ".git/index" in a["reason"], a
        assert ".git/index.lock" in a["reason"] and ".git/refs/heads/main.lock" in a["reason"], a
        assert summary["iterations"][0]["winner"] == "b"
    assert not list(common_dir(repo).rglob("*.lock"))
    assert git(repo, "diff", "--cached", "--name-only") == ""
    assert git(repo, "ls-files", "-t", "calc.py") == "H calc.py"
    assert summary["applied"] is True and "return " in (repo / "calc.py").read_text()


def submodule_repo(tmp_path: Path) -> Path:
    lib = make_repo(tmp_path / "lib", {"lib.py": "X = 1\n"})
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-q", "-m", "lib as a submodule")
    return repo


def test_the_users_store_config_and_hooks_are_the_same_afterwards(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One hostile candidate (one run per mode) rewrites a loose object of the user's commit under its
    own id, writes a pack of its own into the user's store and a loose object with its git's own store
    variables dropped (the worktree's `.git` leads to the user's store), and plants an fsmonitor in every config
    file git reads for the user's next `git status` — the submodule's, `config.worktree`, the global
    config — and a hook. Afterwards the store is object for object what it was, plus the merged
    commit's objects; the config files and hooks are as they were; `git fsck` is clean and the
    fsmonitor never ran."""
    global_config = tmp_path / "global-gitconfig"
    global_config.write_text("[user]\n\tname = Me\n\temail = me@example.com\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    repo = submodule_repo(tmp_path)
    start = git(repo, "rev-parse", "HEAD")
    blob = git(repo, "rev-parse", "HEAD:tests/test_calc.py")
    loose = common_dir(repo) / "objects" / blob[:2] / blob[2:]
    original, before = loose.read_bytes(), all_objects(repo)
    packs = sorted(p.name for p in (common_dir(repo) / "objects" / "pack").iterdir())
    weak = (repo / "tests" / "test_calc.py").read_text().replace(*WEAK_TEST).encode()
    forged = zlib.compress(b"blob %d\0" % len(weak) + weak)
    planted = object_id(b"blob", b"planted by a\n")
    smuggled = object_id(b"blob", b"smuggled by a\n")
    marker = tmp_path / "monitor-ran"
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch {marker}\n")
    monitor.chmod(0o755)
    modules_config = common_dir(repo) / "modules" / "lib" / "config"
    before_modules = modules_config.read_bytes()
    hook = common_dir(repo) / "hooks" / "post-checkout"
    attack = snippet(f"""\
        target = pathlib.Path({str(loose)!r})
        try:
            os.chmod(target, 0o644)
            target.write_bytes({forged!r})
        except OSError:
            pass
        written = subprocess.run(["git", "hash-object", "-w", "--stdin"], input=b"planted by a\\n", capture_output=True)
        bare = {{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}}  # its own store's variables dropped
        subprocess.run(["git", "hash-object", "-w", "--stdin"], input=b"smuggled by a\\n", env=bare, capture_output=True)
        subprocess.run(["git", "pack-objects", "-q", {str(common_dir(repo) / "objects" / "pack" / "pack")!r}],
                       input=written.stdout, capture_output=True)
        for path in ({str(modules_config)!r}, {str(common_dir(repo) / "config.worktree")!r}, {str(global_config)!r}):
            subprocess.run(["git", "config", "--file", path, "core.fsmonitor", {str(monitor)!r}], capture_output=True)
        try:
            pathlib.Path({str(hook)!r}).write_text("#!/bin/sh\\ntouch {marker}\\n")
            os.chmod({str(hook)!r}, 0o755)
        except OSError:
            pass
        """)
    code, summary, err = run(repo, tmp_path, {**HONEST, "exec": attack}, HONEST)
    assert code == 0, err
    a, b = summary["iterations"][0]["candidates"]
    if mode == "off":  # the guard saw it all, rejected a, put everything back, moved the pack out
        assert a["status"] == "rejected", a
        for path in (
            f"objects/{blob[:2]}/{blob[2:]}",
            ".git/objects/pack/pack-",
            f"objects/{smuggled[:2]}/{smuggled[2:]}",
        ):
            assert path in a["reason"], a
        for path in (".git/modules/lib/config", ".git/config.worktree", ".git/hooks/post-checkout", str(global_config)):
            assert path in a["reason"], a
        assert summary["iterations"][0]["winner"] == "b" and summary["applied"] is True
    else:  # the kernel said no: a is the honest fix whose attack failed
        assert a["outside_writes"] == [] and summary["iterations"][0]["winner"] in ("a", "b")
    assert zlib.decompress(loose.read_bytes()) == zlib.decompress(original)
    assert git(repo, "show", "HEAD:tests/test_calc.py").count("assert add(2, 3) == 5") == 1
    assert sorted(p.name for p in (common_dir(repo) / "objects" / "pack").iterdir()) == packs
    merged = {line.split()[0] for line in git(repo, "rev-list", "--objects", f"{start}..HEAD").splitlines()}
    assert planted not in all_objects(repo) and smuggled not in all_objects(repo)
    assert all_objects(repo) == before | merged
    assert modules_config.read_bytes() == before_modules and not (common_dir(repo) / "config.worktree").exists()
    assert global_config.read_text() == "[user]\n\tname = Me\n\temail = me@example.com\n" and not hook.exists()
    subprocess.run(["git", "status"], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "status"], cwd=repo / "lib", check=True, capture_output=True)
    subprocess.run(["git", "fsck", "--no-dangling", "--strict"], cwd=repo, check=True, capture_output=True)
    assert not marker.exists()


def test_a_clean_filter_in_the_candidates_own_config_worktree_never_runs(tmp_path: Path, mode: str) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    marker = tmp_path / "filter-ran"
    plant = snippet(f"""\
        admin = pathlib.Path(subprocess.run(["git", "rev-parse", "--absolute-git-dir"], capture_output=True, text=True).stdout.strip())
        try:
            (admin / "config.worktree").write_text('[filter "evil"]\\n\\tclean = sh -c "touch {marker}; cat"\\n')
        except OSError:
            pass
        subprocess.run(["git", "config", "extensions.worktreeConfig", "true"], capture_output=True)
        pathlib.Path(".gitattributes").write_text("*.py filter=evil\\n")
        """)
    code, summary, err = run(repo, tmp_path, {**HONEST, "exec": plant}, HONEST)
    assert code == 0, err
    assert not marker.exists()
    assert summary["iterations"][0]["winner"] == "b" or mode == "require"
    assert "worktreeConfig" not in (common_dir(repo) / "config").read_text()


def test_a_candidates_gitattributes_names_no_driver_explores_git_runs(tmp_path: Path) -> None:
    """The user's config defines a filter and diff driver whose command is a script of the repository
    (as `nbstripout` setups do); a candidate rewrites the script and names the driver for every file
    in a `.gitattributes` of its own, with a conversion (`ident`) on top: explore's capture runs
    none of it, and captures the bytes on disk. No run: the pool alone, as a fan-out uses it."""
    import git as gitpython

    from explore.edges import gitrepo
    from explore.edges.worktrees import WorktreePool

    user_attributes = {".gitattributes": "*.dat diff=fmt\n", "sub/.gitattributes": "*.bin -diff\n"}
    repo = make_repo(tmp_path / "repo", {**FILES, **user_attributes, "tools/fmt.sh": "cat\n"})
    for key, value in (("filter.fmt.clean", "sh tools/fmt.sh"), ("filter.fmt.smudge", "cat")):
        git(repo, "config", key, value)
    git(repo, "config", "diff.fmt.textconv", "sh tools/fmt.sh")
    git(repo, "config", "diff.fmt.command", "sh tools/fmt.sh")
    marker = tmp_path / "driver-ran"
    pool = WorktreePool(gitpython.Repo(repo), repo, tmp_path / "worktrees" / "run")
    try:
        path, _ = pool.acquire("a", git(repo, "rev-parse", "HEAD"))
        (path / "tools" / "fmt.sh").write_text(f"touch {marker}\ncat\n")
        (path / ".gitattributes").write_text("* filter=fmt diff=fmt ident\n")
        edited = b"def add(a, b):  # $Id: kept as written $\n    return a + b\n"
        (path / "calc.py").write_bytes(edited)
        captured = pool.capture_patch(path, tmp_path / "a.diff")
        assert not marker.exists()
        assert git(repo, "cat-file", "blob", f"{captured.tree}:calc.py").encode() + b"\n" == edited
        assert set(captured.files) == {".gitattributes", "calc.py", "tools/fmt.sh"}
        names = ("calc.py", "a.dat", "sub/deep/x.bin")
        asked = subprocess.run(  # the user's own attributes still hold, a folder's at any depth under it
            gitrepo.worktree_git(pool.root / ".reader", path, "check-attr", "filter", "diff", "--", *names),
            capture_output=True,
            text=True,
            check=True,
            env=gitrepo.worktree_env(None, repo / ".git" / "objects"),
            cwd=path,
        ).stdout.splitlines()
        assert asked == [
            "calc.py: filter: unspecified",
            "calc.py: diff: unspecified",
            "a.dat: filter: unspecified",
            "a.dat: diff: fmt",
            "sub/deep/x.bin: filter: unspecified",
            "sub/deep/x.bin: diff: unset",
        ]
    finally:
        pool.remove_all()


def test_a_dirty_trees_file_deleted_without_the_sandbox_is_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXPLORE_SANDBOX", "off")
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject()})
    (repo / "notes.txt").write_text("the user's notes, not committed\n")
    delete = snippet(f"""\
        pathlib.Path({str(repo / "notes.txt")!r}).unlink()
        """)
    code, summary, err = run(repo, tmp_path, {**HONEST, "exec": delete}, HONEST)
    assert_honest_won(code, summary, err, "notes.txt")
    assert (repo / "notes.txt").read_text() == "the user's notes, not committed\n"


@needs_landlock
def test_without_bubblewrap_landlock_keeps_a_hostile_candidate_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_bad_input import ONE_BUG
    from test_outside_writes import agent as hostile_agent
    from test_outside_writes import assert_untouched, guarded
    from test_safety_faults import kill_everything_under

    bin_dir = tmp_path / "bin"  # a PATH without bwrap
    bin_dir.mkdir()
    for tool in ("git", "sh"):
        found = subprocess.run(["which", tool], capture_output=True, text=True, check=True).stdout.strip()
        (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("EXPLORE_SANDBOX", "auto")
    repo = make_repo(tmp_path / "repo", ONE_BUG)
    start = guarded(repo)
    try:
        code, summary, err = run_cli(
            [
                "run",
                str(repo),
                "--parallel",
                "2",
                "--max-iterations",
                "1",
                "--agent-cmd",
                hostile_agent(tmp_path, hostile="yes"),
                "--json",
            ]
        )
        assert code == 0 and summary is not None, err[-3000:]
        assert "candidates are sandboxed (Landlock" in err
        a, b = summary["iterations"][0]["candidates"]
        tries = json.loads(a["hypothesis"])
        assert set(tries) == {"hook", "alias", "calc", "planted"} and "done" not in tries.values(), tries
        assert a["outside_writes"] == [] and b["outside_writes"] == []
        assert summary["iterations"][0]["winner"] == "a" and summary["applied"] is True
        assert summary["sandbox"]["mechanism"] == "landlock", summary.get("sandbox")
        assert_untouched(repo, start, summary)
    finally:
        kill_everything_under(tmp_path / "worktrees", tmp_path / "agent")


@needs_landlock
def test_a_daemon_dies_with_its_candidate_under_landlock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside bubblewrap's PID namespace, the marker in a Landlock-confined candidate's environment
    finds its double-forked, setsid daemon: dead before the run ends."""
    from test_bad_input import ONE_BUG
    from test_outside_writes import agent as hostile_agent
    from test_outside_writes import assert_untouched, guarded
    from test_safety_faults import kill_everything_under, live_processes_in

    monkeypatch.setenv("EXPLORE_SANDBOX", "auto")
    repo = make_repo(tmp_path / "repo", ONE_BUG)
    start = guarded(repo)
    try:
        code, summary, err = run_cli(
            [
                "run",
                str(repo),
                "--parallel",
                "2",
                "--max-iterations",
                "1",
                "--agent-cmd",
                hostile_agent(tmp_path, daemon="daemon.pid"),
                "--json",
            ]
        )
        assert code == 0 and summary is not None, err[-3000:]
        assert summary["sandbox"]["mechanism"] in ("landlock", "bubblewrap"), summary["sandbox"]
        assert not live_processes_in(tmp_path / "agent")
        assert_untouched(repo, start, summary)
    finally:
        kill_everything_under(tmp_path / "worktrees", tmp_path / "agent")
