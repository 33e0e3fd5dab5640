"""Issue 39 point 2: destructive by effect, not by name. A removal a fix adds is judged by who
created what it removes (decide/removal.py): a test per side of the line, on real patches (git diff
of real files) and the files as they are before and after."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from explore.decide import escalation, removal

HEADER = "import os\nimport shutil\nimport tempfile\n\n\n"


def review(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> escalation.PatchReview:
    """The change from before to after as git diffs it, reviewed with both versions as sources."""
    root = tmp_path / "repo"
    root.mkdir(parents=True)
    run = lambda *a: subprocess.run(["git", *a], cwd=root, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    for path, text in before.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "before")
    for path, text in after.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    patch = subprocess.run(["git", "diff", "--text"], cwd=root, capture_output=True, text=True, check=True).stdout
    old = {p: textwrap.dedent(t) for p, t in before.items()}
    new = {**old, **{p: textwrap.dedent(t) for p, t in after.items()}}
    return escalation.review_patch(patch, (), escalation.Sources(before=old.get, after=new.get))


def one_file(tmp_path: Path, before: str, after: str, path: str = "pkg/work.py") -> escalation.PatchReview:
    return review(tmp_path, {path: HEADER + before}, {path: HEADER + after})


# ------------------------------------------------------------------ not destructive: what the flow created

LEAKS = """\
def pack(names):
    work = tempfile.mkdtemp()
    for name in names:
        open(os.path.join(work, name), "w").close()
    return sorted(os.listdir(work))
"""


@pytest.mark.parametrize(
    ("after", "rule"),
    [
        (
            LEAKS.replace(
                "    return sorted(os.listdir(work))",
                "    found = sorted(os.listdir(work))\n    shutil.rmtree(work)\n    return found",
            ),
            "created_here",
        ),
        (
            LEAKS.replace(
                "work = tempfile.mkdtemp()", "work = os.path.join(names[0], 'build')\n    os.makedirs(work)"
            ).replace("    return sorted(os.listdir(work))", "    shutil.rmtree(os.path.abspath(work))\n    return []"),
            "created_here",
        ),
        (
            "def pack(names):\n    with tempfile.TemporaryDirectory() as work:\n        shutil.rmtree(os.path.join(work, 'x'), ignore_errors=True)\n        return names\n",
            "created_here",
        ),
    ],
    ids=["mkdtemp", "makedirs-of-a-local", "temporary-directory"],
)
def test_removing_what_the_same_function_created_is_not_destructive(tmp_path: Path, after: str, rule: str) -> None:
    found = one_file(tmp_path, LEAKS, after)
    assert found.destructive is None
    assert [r.rule for r in found.allowed] == [rule]
    assert "created" in found.allowed[0].describe() and "pkg/work.py" in found.allowed[0].describe()


GENERATE = """\
from .utils import make_sure_path_exists


def render_and_create_dir(name, output_dir):
    dir_to_create = os.path.normpath(os.path.join(output_dir, name))
    make_sure_path_exists(dir_to_create)
    return dir_to_create


def generate_files(name, output_dir, hook):
    project_dir = render_and_create_dir(name, output_dir)
    project_dir = os.path.abspath(project_dir)
    if not hook(project_dir):
        return None
    return project_dir
"""
UTILS = """\
import os


def make_sure_path_exists(path):
    try:
        os.makedirs(path)
    except OSError:
        return False
    return True
"""


def test_removing_what_a_helper_created_is_not_destructive(tmp_path: Path) -> None:
    """cookiecutter's bug 4: the fix removes the project directory a helper of the same module
    made (through make_sure_path_exists of another module) when a hook fails."""
    fixed = GENERATE.replace(
        "        return None", "        shutil.rmtree(project_dir, ignore_errors=True)\n        return None"
    )
    found = review(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/generate.py": HEADER + GENERATE},
        {"pkg/generate.py": HEADER + fixed},
    )
    assert found.destructive is None
    [allowed] = found.allowed
    assert allowed.rule == "created_by_helper" and allowed.function == "generate_files"
    assert "render_and_create_dir" in allowed.detail


def test_repeating_a_cleanup_the_module_already_did_is_not_destructive(tmp_path: Path) -> None:
    before = (
        "class Cache:\n    def __init__(self, folder):\n        self.folder = folder\n\n"
        "    def close(self):\n        shutil.rmtree(self.folder)\n"
    )
    after = before + "\n    def reset(self):\n        shutil.rmtree(self.folder)\n"
    found = one_file(tmp_path, before, after)
    assert found.destructive is None and [r.rule for r in found.allowed] == ["module_precedent"]


# ------------------------------------------------------------------ destructive: what the program was given

PARAM = "def export(out_dir, rows):\n    os.makedirs(out_dir, exist_ok=True)\n    return rows\n"


@pytest.mark.parametrize(
    ("before", "after", "why"),
    [
        (
            PARAM,
            PARAM.replace("    os.makedirs", "    shutil.rmtree(out_dir, ignore_errors=True)\n    os.makedirs"),
            "parameter",
        ),
        (
            PARAM,
            PARAM.replace("    return rows", "    target = out_dir\n    shutil.rmtree(target)\n    return rows"),
            "not created",
        ),
        (
            PARAM,
            PARAM.replace("    return rows", "    shutil.rmtree(os.path.expanduser('~/.cache/app'))\n    return rows"),
            "cannot tell",
        ),
        (
            "class Store:\n    def __init__(self, data_dir):\n        self.data_dir = data_dir\n",
            "class Store:\n    def __init__(self, data_dir):\n        self.data_dir = data_dir\n\n    def reset(self):\n        shutil.rmtree(self.data_dir)\n",
            "not created",
        ),
        (
            "def wipe(path):\n    return path\n",
            "from shutil import rmtree\n\n\ndef wipe(path):\n    rmtree(path)\n    return path\n",
            "parameter",
        ),
        (
            PARAM,
            PARAM.replace(
                "    return rows",
                "    home = os.path.expanduser('~')\n    os.makedirs(home, exist_ok=True)\n    shutil.rmtree(home)\n    return rows",
            ),
            "not created",
        ),
        (
            PARAM,
            "def mkdtemp():\n    return os.path.expanduser('~')\n\n\n"
            + PARAM.replace("    return rows", "    work = mkdtemp()\n    shutil.rmtree(work)\n    return rows"),
            "not created",
        ),
    ],
    ids=[
        "parameter",
        "alias-of-a-parameter",
        "home-folder",
        "attribute-from-the-caller",
        "bare-rmtree",
        "made-if-missing-is-not-made",
        "a-project-function-named-mkdtemp",
    ],
)
def test_removing_what_the_program_was_given_is_destructive(tmp_path: Path, before: str, after: str, why: str) -> None:
    found = one_file(tmp_path, before, after)
    assert found.destructive is not None and found.destructive.category == "destructive"
    assert "did not create" in found.destructive.reason and why in found.destructive.reason
    assert "pkg/work.py" in found.destructive.reason


def test_what_no_call_explains_and_the_other_rows_stay_destructive_by_name(tmp_path: Path) -> None:
    mention = one_file(tmp_path / "a", LEAKS, LEAKS + "\n\n# shutil.rmtree(work) would clean up\n")
    assert mention.destructive is not None and mention.destructive.name == "rmtree"
    drop = one_file(tmp_path / "b", LEAKS, LEAKS + '\n\ndef reset(db):\n    db.execute("DROP TABLE users")\n')
    assert drop.destructive is not None and drop.destructive.name == "drop_table"
    script = review(tmp_path / "c", {"clean.sh": "echo\n"}, {"clean.sh": "echo\nrm -rf build\n"})
    assert script.destructive is not None and script.destructive.name == "rm_rf"
    broken = one_file(tmp_path / "d", LEAKS, LEAKS + "\n\ndef oops(:\n    shutil.rmtree(work)\n")
    assert broken.destructive is not None and broken.destructive.name == "rmtree"  # unreadable: by name


def test_without_sources_every_removal_is_judged_by_name() -> None:
    patch = "--- a/w.py\n+++ b/w.py\n@@ -1,1 +1,2 @@\n x = 1\n+shutil.rmtree(tempfile.mkdtemp())\n"
    assert escalation.classify_patch(patch) is escalation.PATTERNS_BY_NAME["rmtree"]
    assert escalation.added_by_file(patch) == {"w.py": {2: "shutil.rmtree(tempfile.mkdtemp())"}}


def test_the_rules_are_all_named() -> None:
    assert set(removal.RULES) == {"created_here", "created_by_helper", "module_precedent", "not_created"}
