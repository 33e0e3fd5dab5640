"""Issue 39 point 2 end to end: a real package built in the test, a scripted agent's fix that removes
a directory, explore run as a user runs it. A fix that removes the working directory its own
function made merges; one that removes the folder the caller gave escalates `destructive`."""

from __future__ import annotations

from pathlib import Path

from conftest import assert_no_debris, git, make_repo, run_cli
from test_run_e2e import scripted_agent

CORE = """\
import os
import shutil
import tempfile


def pack(names):
    \"\"\"The names, sorted, staged through a working directory of its own.\"\"\"
    work = tempfile.mkdtemp(prefix="packer-")
    for name in names:
        open(os.path.join(work, name), "w").close()
    return sorted(os.listdir(work))


def export(rows, out_dir):
    \"\"\"rows written one a line to out_dir/rows.txt.\"\"\"
    os.makedirs(out_dir)
    with open(os.path.join(out_dir, "rows.txt"), "w") as out:
        out.writelines(f"{row}\\n" for row in rows)
"""
TESTS = """\
import tempfile

from packer.core import export, pack


def test_pack_sorts_and_leaves_no_working_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert pack(["b", "a"]) == ["a", "b"]
    assert list(tmp_path.iterdir()) == []


def test_export_into_an_existing_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("the user's own file")
    export(["x", "y"], str(out))
    assert (out / "rows.txt").read_text() == "x\\ny\\n"
"""
LEAK = "    return sorted(os.listdir(work))"
CLEANS_UP = "    found = sorted(os.listdir(work))\n    shutil.rmtree(work)\n    return found"
STRICT = "    os.makedirs(out_dir)\n"
WIPES = "    shutil.rmtree(out_dir, ignore_errors=True)\n    os.makedirs(out_dir)\n"


def project(tmp_path: Path, bug: str) -> Path:
    """The package with one bug: the working directory leaked (pack), or an existing folder refused (export)."""
    core = CORE if bug == "export" else CORE.replace(STRICT, "    os.makedirs(out_dir, exist_ok=True)\n")
    core = core if bug == "pack" else core.replace(LEAK, CLEANS_UP)
    return make_repo(tmp_path / "repo", {"packer/__init__.py": "", "packer/core.py": core, "tests/test_core.py": TESTS})


def test_a_fix_that_removes_its_own_working_directory_merges(tmp_path: Path) -> None:
    repo = project(tmp_path, "pack")
    agent = scripted_agent(tmp_path, {"a": {"replace": {"packer/core.py": [LEAK, CLEANS_UP]}}})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--parallel", "1", "--json"])
    assert code == 0 and summary is not None and summary["status"] == "succeeded", err
    assert summary["escalation"] is None and summary["applied"] is True
    assert "shutil.rmtree(work)" in (repo / "packer" / "core.py").read_text()
    (candidate,) = summary["iterations"][0]["candidates"]
    [judged] = candidate["removals"]
    assert "shutil.rmtree(work)" in judged and "the same function created" in judged and "tempfile.mkdtemp" in judged
    assert "removes a directory, not destructive: `shutil.rmtree(work)`" in Path(summary["report"]).read_text()
    assert_no_debris(repo)


def test_a_fix_that_removes_the_folder_it_was_given_escalates(tmp_path: Path) -> None:
    repo = project(tmp_path, "export")
    start = git(repo, "rev-parse", "HEAD")
    agent = scripted_agent(tmp_path, {"a": {"replace": {"packer/core.py": [STRICT, WIPES]}}})
    code, summary, err = run_cli(["run", str(repo), "--agent-cmd", agent, "--parallel", "1", "--json"])
    assert code == 3 and summary is not None and summary["status"] == "escalated", err
    escalation = summary["escalation"]
    assert escalation["category"] == "destructive"
    assert "did not create" in escalation["reason"] and "`out_dir` is a parameter" in escalation["reason"]
    assert summary["merged_commit"] is None and git(repo, "rev-parse", "HEAD") == start
    assert "rmtree(out_dir" not in (repo / "packer" / "core.py").read_text()
    assert "HELP NEEDED (destructive)" in err
    assert_no_debris(repo)
