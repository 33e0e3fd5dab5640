"""Real git repositories in temp folders; worktrees kept under tmp_path; no debris left."""

from __future__ import annotations

import fcntl
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest

if TYPE_CHECKING:
    from explore.model.config import Options
    from explore.model.events import Subscriber
    from explore.model.runstate import RunState

GIT_ID = ["-c", "user.name=Test User", "-c", "user.email=test@example.com"]


def pytest_configure(config: pytest.Config) -> None:
    if sys.dont_write_bytecode and not hasattr(config, "workerinput"):  # xdist's workers start after this
        warm_bytecode()


def warm_bytecode() -> None:
    """Under PYTHONDONTWRITEBYTECODE (set where CI runs) no process writes a .pyc, so every process a
    test starts paid again for what a cache holds: each `explore` compiled explore's source (0.13 s of
    CPU), each pytest in a test's repository (this venv's python) rewrote and compiled its plugins'
    modules — anyio's thirty, xdist, pytest-cov, pytest-metadata, json-report, explore's plugin —
    0.45 s of its 0.95 s. Written once here, before any worker starts, they are read by every later
    process (reading a cache is not writing one); what any test runs is unchanged. test_run_e2e.py:
    75.5 s of CPU without them, 62.3 s with. Best effort: a read-only venv leaves things as they were."""
    import compileall
    import tempfile

    import explore

    package = Path(explore.__file__).parent
    compileall.compile_dir(package, quiet=2)
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(package / "pytest_plugin")  # loaded by -p as explore loads it (edges/testing)
    with tempfile.TemporaryDirectory() as empty:  # nothing to collect: the plugins load, rewritten and cached
        plugins = ["-p", "no:cacheprovider", "-p", "explore_pytest_plugin"]
        subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", *plugins, f"--rootdir={empty}", empty],
            cwd=empty,
            env=env,
            capture_output=True,
            timeout=300,
            check=False,
        )


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPLORE_WORKTREES_DIR", str(tmp_path / "worktrees"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # The same suite wherever it runs, bubblewrap installed or not; the sandbox's own tests
    # (test_outside_writes.py) take the `bwrap` fixture and choose their mode.
    # EXPLORE_TEST_SANDBOX=auto runs the whole suite sandboxed where bubblewrap works.
    monkeypatch.setenv("EXPLORE_SANDBOX", os.environ.get("EXPLORE_TEST_SANDBOX", "off"))


@pytest.fixture(scope="session")
def bwrap() -> str:
    """bubblewrap, installed from the distribution's packages when missing and we are root (one
    install for all test workers: a lock file); otherwise these tests fail, saying why."""
    import fcntl
    import shutil
    import tempfile

    with open(Path(tempfile.gettempdir()) / "explore-tests-bwrap.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = shutil.which("bwrap")
        if found is None and sys.platform.startswith("linux") and os.geteuid() == 0 and shutil.which("apt-get"):
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            install = ["apt-get", "install", "-y", "-q", "bubblewrap"]
            if subprocess.run(install, capture_output=True, env=env, timeout=600).returncode != 0:
                subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=env, timeout=600)
                subprocess.run(install, capture_output=True, env=env, timeout=600)
            found = shutil.which("bwrap")
    if found is None:
        pytest.fail(
            "the sandbox tests need bubblewrap: install it (apt-get install bubblewrap), or run the tests as root "
            "on a Debian-like system so they install it themselves"
        )
    return found


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def make_repo(root: Path, files: dict[str, str], python: str | None = None, explore_config: str = "") -> Path:
    """A committed git repo on branch main whose [tool.explore] python is this interpreter."""
    root.mkdir(parents=True, exist_ok=True)
    files = dict(files)
    files.setdefault(".gitignore", "__pycache__/\n")
    if "pyproject.toml" not in files:
        files["pyproject.toml"] = (
            '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
            f'[tool.explore]\npython = "{python or sys.executable}"\n{explore_config}'
        )
    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def run_cli(args: list[str], cwd: Path | None = None) -> tuple[int, dict | None, str]:
    """explore as a user runs it: a real process; (exit code, JSON summary or None, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "explore", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    payload = None
    if done.stdout.strip():
        try:
            payload = json.loads(done.stdout.strip().splitlines()[-1])
        except ValueError:
            payload = None
    return done.returncode, payload, done.stderr


async def run_locked(repo: Path, options: Options, subscriber: Subscriber | None = None) -> RunState:
    """A new run of the loop on repo as `explore run` starts it (cli/session), in this process: the
    repository locked for it and released after; subscriber hears its events."""
    from explore.edges import gitrepo
    from explore.run import repair, state

    info = gitrepo.open_repo(repo)
    state.ensure_writable(info.root)
    run_id = state.new_run_id()
    state.acquire_lock(info.root, run_id)
    try:
        return await repair.run_repair(info, options, subscriber or (lambda event: None), run_id=run_id)
    finally:
        state.release_lock(info.root, run_id)


def venv_of(versions: tuple[str, ...], packages: tuple[str, ...], folder: Path) -> str:
    """The python of a fresh venv in folder, made from the first of these Python versions the machine
    has (on PATH or under pyenv) and holding these packages from the index; the test is skipped,
    saying why, when there is no such Python or the packages do not install."""
    base = None
    for version in versions:
        found = [
            shutil.which(f"python{version}"),
            *sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python"))),
        ]
        # a pyenv shim of a version not selected fails: the next one
        base = next(
            (p for p in filter(None, found) if subprocess.run([p, "--version"], capture_output=True).returncode == 0),
            None,
        )
        if base:
            break
    if base is None:
        pytest.skip(f"no Python {' / '.join(versions)} on this machine")
    return fresh_venv(base, packages, folder / "venv")


def once_folder(name: str, factory: pytest.TempPathFactory) -> Path:
    """Where built_once(name) builds: one folder for the whole session, whichever worker asks."""
    root = factory.getbasetemp()
    return (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / f"once-{name}"


def built_once(name: str, factory: pytest.TempPathFactory, make: Callable[[Path], str]) -> str:
    """What make(folder) returns (a venv's python, a bench's JSON), made once per test session in
    folder and shared by pytest-xdist's workers: a module-scoped fixture was built by each worker
    whose share of the module's tests it was (two venvs of pytest 4.6, 89 s each, under load). The
    first worker builds it under a lock, the others wait and reuse it — or skip as it skipped."""
    folder = once_folder(name, factory)
    folder.mkdir(exist_ok=True)
    built, skipped = folder / "python.txt", folder / "skipped.txt"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if skipped.exists():
            pytest.skip(skipped.read_text())
        if not built.exists():
            try:
                built.write_text(make(folder))
            except pytest.skip.Exception as why:
                skipped.write_text(str(why))
                raise
        return built.read_text()


def fresh_venv(base: str, packages: tuple[str, ...], venv: Path) -> str:
    """The python of a new venv of base at venv holding these packages (skipped when they do not
    install). Without ensurepip: this interpreter's pip installs into it (`pip --python`), which
    halves the CPU a venv costs the suite (5 s against 11 s for pytest + coverage)."""
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--disable-pip-version-check", *packages],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        pytest.skip(f"{', '.join(packages)} could not be installed: {done.stderr[-300:]}")
    return python


def assert_no_debris(root: Path) -> None:
    worktrees = git(root, "worktree", "list", "--porcelain").count("worktree ")
    assert worktrees == 1, git(root, "worktree", "list")
    from explore.run.state import lock_path

    assert not lock_path(root).exists()


RAY_HEADS: dict[str, int] = {}
"""Address of each test cluster this process started → the pid of its `ray start --block`."""


def ray_command_lines(address: str) -> list[str]:
    """The command lines of the test cluster at `address` (its head's process tree; its workers
    are the raylet's children): parallel test workers may run clusters of their own."""
    found = []
    for proc in psutil.Process(RAY_HEADS[address]).children(recursive=True):
        try:
            found.append(" ".join(proc.cmdline()))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


@pytest.fixture(scope="module")
def ray_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real local Ray per test module (`ray start --head --block`), its whole tree killed after."""
    import socket

    from explore.edges import procs

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    temp = tmp_path_factory.mktemp("ray")
    ray_cli = Path(sys.executable).with_name("ray")
    previous = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"  # no token file in $HOME; drivers and CLI runs inherit it
    head = subprocess.Popen(
        [
            str(ray_cli),
            "start",
            "--head",
            f"--port={port}",
            "--num-cpus=2",
            f"--temp-dir={temp}",
            "--include-dashboard=false",
            "--disable-usage-stats",
            "--object-store-memory=100000000",
            "--block",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:  # the GCS port answers once the head is up
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if head.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"ray start --head did not come up (exit {head.poll()})") from None
                time.sleep(0.2)
        RAY_HEADS[address] = head.pid
        yield address
    finally:
        procs.kill_tree(head.pid)
        head.wait(timeout=10)
        if previous is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = previous
