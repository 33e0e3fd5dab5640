"""What each test process costs around it (issue 27): its private home removed on a thread of its own,
and the user's global excludes file looked up once a run instead of three times per candidate, the json report plugin
found in the interpreter's venv without a process — each still doing its job."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import git
import pytest

from conftest import make_repo
from explore.edges import gitrepo, homes, testing
from explore.edges.worktrees import WorktreePool
from test_run_e2e import CALC


def test_a_private_home_is_gone_once_its_removals_are_drained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    roots = []
    for _ in range(3):
        with homes.private_home() as env:
            roots.append(Path(env["HOME"]).parent)
            (Path(env["XDG_CACHE_HOME"]) / "made-by-the-job").write_text("x")
            (Path(env["TMPDIR"]) / "scratch").mkdir()
    homes.drain()
    assert roots and not any(root.exists() for root in roots)
    assert not list(tmp_path.glob(f"{homes.PREFIX}*"))


def test_the_global_excludes_are_looked_up_once_a_run_and_a_changed_ignores_file_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", CALC)
    asked = []
    real = gitrepo._global_excludes

    def counted(r: git.Repo) -> str:
        asked.append(1)
        return real(r)

    monkeypatch.setattr(gitrepo, "_global_excludes", counted)
    pool = WorktreePool(git.Repo(repo), repo, tmp_path / "worktrees" / "run")
    try:
        path, _ = pool.acquire("a", pool.repo.head.commit.hexsha)
        (path / "calc.py").write_text((path / "calc.py").read_text() + "\n# changed\n")
        (path / ".coverage").write_text("generated\n")  # GENERATED_IGNORES: never part of a patch
        first = pool.capture_patch(path, tmp_path / "a.patch")
        ignores = Path(pool.repo.common_dir) / "explore-ignores"
        written = ignores.read_text()
        ignores.write_text("")  # tampered with between two uses
        pool.scrub(path)
        assert ignores.read_text() == written and not (path / ".coverage").exists()
        assert pool.tree_of(path) == first.tree and first.files == ["calc.py"]
        assert len(asked) == 1
    finally:
        pool.remove_all()


def test_a_module_in_the_venv_of_the_interpreter_is_found_without_starting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pytest_jsonreport probe before every baseline: seen on disk in the interpreter's virtual
    environment (no process), asked of the interpreter otherwise — as before, whatever the answer."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site_packages = next(venv.glob("lib/python3*/site-packages"))
    (site_packages / "as_package").mkdir()
    (site_packages / "as_package" / "__init__.py").write_text("")
    (site_packages / "as_file.py").write_text("")
    started: list[object] = []
    real = subprocess.run

    def counted(*args: object, **kwargs: object) -> object:
        started.append(args)
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", counted)
    assert testing.has_module(python, "as_package") and testing.has_module(python, "as_file")
    assert started == []
    assert testing.has_module(python, "json")  # the standard library: the interpreter is asked
    assert not testing.has_module(python, "no_such_module_here")
    assert len(started) == 2


@pytest.mark.anyio
async def test_a_report_is_read_once_after_its_scrub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report of a pytest run is parsed once, after the scrub: a test that printed a credential
    leaves it redacted in the outcomes."""
    secret = "sk-ant-perproc-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    work = tmp_path / "w"
    work.mkdir()
    (work / "test_it.py").write_text(
        "import os\n\n\ndef test_leaks():\n    assert os.environ['ANTHROPIC_API_KEY'] == 'other'\n\n\n"
        "def test_fine():\n    assert True\n"
    )
    parsed: list[int] = []
    real = json.loads

    def counted(text: str | bytes, *args: object, **kwargs: object) -> object:
        if isinstance(text, str) and '"tests"' in text:
            parsed.append(1)
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    command = testing.make_command(None, None, sys.executable)
    monkeypatch.setattr(json, "loads", counted)
    leaked = await testing.run_tests(command, work, tmp_path / "logs" / "leak.log")
    assert len(parsed) == 1 and leaked.infra_error is None
    assert leaked.outcomes["test_it.py::test_leaks"].outcome == "failed"
    assert secret not in leaked.outcomes["test_it.py::test_leaks"].longrepr
    assert "[redacted]" in leaked.outcomes["test_it.py::test_leaks"].longrepr

    (work / "test_it.py").write_text("def test_fine():\n    assert True\n")
    parsed.clear()
    clean = await testing.run_tests(command, work, tmp_path / "logs" / "clean.log")
    assert len(parsed) == 1 and clean.outcomes["test_it.py::test_fine"].outcome == "passed"
