"""The console script's quick end (cli/exits.leave): the interpreter's teardown is skipped, never what
anyone sees of the end — the output, the atexit handlers, the exit code, a thread still running."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from explore.cli.commands import main


def python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_quick_end_flushes_the_output_runs_atexit_and_keeps_the_code(tmp_path: Path) -> None:
    done = python(
        "import atexit, os, sys\n"
        "from explore.cli.exits import leave\n"
        "atexit.register(lambda: open('atexit-ran', 'w').write('yes'))\n"
        "real = os._exit\n"
        "def quick(code):\n"
        "    open('quick', 'w').write(str(code))\n"
        "    real(code)\n"
        "os._exit = quick\n"
        "sys.stdout.write('x' * 100000)\n"
        "sys.stderr.write('the end')\n"
        "leave(3)\n",
        tmp_path,
    )
    assert done.returncode == 3
    assert done.stdout == "x" * 100000 and done.stderr == "the end"
    assert (tmp_path / "atexit-ran").read_text() == "yes"
    assert (tmp_path / "quick").read_text() == "3"


def test_a_thread_still_running_gets_the_ordinary_exit(tmp_path: Path) -> None:
    """The interpreter waits for a non-daemon thread: so does leave (sys.exit, the thread finishes)."""
    done = python(
        "import threading\n"
        "from explore.cli.exits import leave\n"
        "go = threading.Event()\n"
        "def work():\n"
        "    go.wait()\n"
        "    open('thread-done', 'w').write('yes')\n"
        "threading.Thread(target=work).start()\n"
        "try:\n"
        "    leave(5)\n"
        "except SystemExit:\n"
        "    go.set()\n"
        "    raise\n",
        tmp_path,
    )
    assert done.returncode == 5, done.stderr
    assert (tmp_path / "thread-done").read_text() == "yes"


def test_a_message_as_exit_code_is_printed_as_python_does(tmp_path: Path) -> None:
    done = python("from explore.cli.exits import leave\nleave('explore: gone')\n", tmp_path)
    assert (done.returncode, done.stderr.strip()) == (1, "explore: gone")


def test_the_console_script_ends_quickly_with_its_exit_code(tmp_path: Path) -> None:
    """`python -m explore` (as the `explore` script) on a folder that is no repository: exit 2, the JSON
    error on stdout, the message on stderr — through the quick end."""
    done = python(
        "import os, sys\n"
        "real = os._exit\n"
        "def quick(code):\n"
        "    open('quick', 'w').write(str(code))\n"
        "    real(code)\n"
        "os._exit = quick\n"
        "sys.argv = ['explore', 'run', '--json', '.']\n"
        "import runpy\n"
        "runpy.run_module('explore', run_name='__main__')\n",
        tmp_path,
    )
    assert done.returncode == 2
    assert '"exit_code": 2' in done.stdout and "explore: error:" in done.stderr
    assert (tmp_path / "quick").read_text() == "2"


def test_an_in_process_caller_gets_the_ordinary_result() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and "explore" in result.output
