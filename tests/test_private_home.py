"""Issue 30: each test job its own $HOME, TMPDIR and XDG folders. A suite whose autouse fixture
moves a file in $HOME aside and back used to trample itself when shards and candidates ran at
the same time with one home: the honest fix was rejected for "breaking" unrelated tests. Real
explore process, real pytest, the user's home a folder of the test's whose files must come out
untouched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import assert_no_debris, make_repo
from explore.edges import homes

CONFTEST = """\
    import time
    from pathlib import Path

    import pytest


    @pytest.fixture(autouse=True)
    def toolrc():
        \"\"\"As a CLI project's tests do: the user's ~/.toolrc aside, the test's own in its place, and back.\"\"\"
        rc, aside = Path.home() / ".toolrc", Path.home() / ".toolrc.aside"
        if rc.exists():
            rc.rename(aside)
        rc.write_text("test settings\\n")
        time.sleep(0.01)
        yield rc
        rc.unlink()
        if aside.exists():
            aside.rename(rc)
    """

SUITE = """\
    import time

    import pytest


    @pytest.mark.parametrize("n", range(25))
    def test_settings(toolrc, n):
        time.sleep(0.03)
        assert toolrc.read_text() == "test settings\\n"
    """

HOME_CHECKS = """\
    import os
    import subprocess
    import tempfile
    from pathlib import Path

    from calc import double


    def test_private_home_seeded_with_the_git_identity():
        assert Path.home() != Path(os.environ["USER_HOME_OF_THE_TEST"])
        assert subprocess.run(["git", "config", "--global", "user.name"], capture_output=True, text=True).stdout.strip() == "Seeded User"
        assert not Path(tempfile.gettempdir()).is_relative_to(Path(os.environ["USER_HOME_OF_THE_TEST"]))
        assert os.environ["XDG_CONFIG_HOME"].startswith(str(Path.home()))
        assert double(2) == 4
    """


def test_a_suite_that_moves_files_in_home_is_repaired_in_parallel(tmp_path: Path) -> None:
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    (user_home / ".toolrc").write_text("the user's own settings\n")
    (user_home / ".gitconfig").write_text("[user]\n\tname = Seeded User\n\temail = seeded@example.com\n")
    before = sorted((p.relative_to(user_home).as_posix(), p.read_bytes()) for p in user_home.rglob("*") if p.is_file())
    repo = make_repo(
        tmp_path / "repo",
        {
            "calc.py": "def half(x):\n    return x * 2\n\n\ndef double(x):\n    return x + x\n",
            "tests/conftest.py": CONFTEST,
            "tests/test_calc.py": "from calc import double, half\n\n\ndef test_half():\n    assert half(8) == 4\n\n\ndef test_double():\n    assert double(3) == 6\n",
            **{f"tests/test_settings_{k}.py": SUITE for k in range(4)},
            "tests/test_home.py": HOME_CHECKS,
        },
    )
    env = {
        **os.environ,
        "HOME": str(user_home),
        "USER_HOME_OF_THE_TEST": str(user_home),
        "TMPDIR": str(tmp_path / "user-tmp"),
    }
    (tmp_path / "user-tmp").mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "explore",
            "run",
            str(repo),
            "--agent",
            "mutate",
            "--parallel",
            "3",
            "--shards",
            "2",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    import json

    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr
    assert (
        summary["status"] == "succeeded" and summary["final"]["pass_rate"] == 100.0 and summary["final"]["total"] == 103
    )
    assert "split into" in done.stderr  # the suite ran in shards, at the same time
    assert "x * 2" not in (repo / "calc.py").read_text()
    after = sorted((p.relative_to(user_home).as_posix(), p.read_bytes()) for p in user_home.rglob("*") if p.is_file())
    assert after == before  # the user's home: not a file moved, added or changed
    assert not list((tmp_path / "user-tmp").glob(f"{homes.PREFIX}*"))  # every private home removed
    assert_no_debris(repo)


def test_sweep_removes_the_homes_of_a_dead_creator_only(tmp_path: Path) -> None:
    """A home is named after the pid that made it; sweep() removes those whose creator is gone
    (an explore killed with SIGKILL) and keeps this live process's own."""
    dead = subprocess.run(
        [sys.executable, "-c", "from explore.edges import homes; print(homes.create())"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = Path(dead.stdout.strip())
    mine = homes.create()
    try:
        assert orphan.is_dir() and orphan.name.startswith(homes.PREFIX)
        removed = homes.sweep()
        assert orphan in removed and not orphan.exists()
        assert mine.is_dir() and mine not in removed
    finally:
        homes.remove(mine)
        homes.remove(orphan)
