"""The `explore` command group, the console script's entry: its commands live by kind — repair.py
(run, resume, demo), runs.py (status, clean, rollback, apply, undo) and bench (the bench command, and bench_render its tables and chart).
Each command is thin: options in, one typed call, a message and an exit code out.
"""

from __future__ import annotations

from typing import Any

import click

from .exits import leave
from .repair import demo, resume, run
from .runs import apply_command, clean, rollback, status, undo


class _Explore(click.Group):
    """The console script's group: called as the process's entry (`explore …`, `python -m explore`),
    its command's end is the process's quick end (exits.leave); an in-process caller of `main.main`
    (click's CliRunner, a test) gets click's SystemExit as before."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.main(*args, **kwargs)
        except SystemExit as exc:
            leave(exc.code)


@click.group(cls=_Explore, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(None, "-V", "--version", package_name="explore-runner", prog_name="explore")
def main() -> None:
    """Repair failing test suites: candidate fixes explored side by side in git worktrees,
    scored by the tests they make pass, the best merged on a run branch."""


for _command in (run, resume, status, clean, rollback, apply_command, undo, demo):
    main.add_command(_command)


def _register_bench() -> None:
    from .bench import bench

    main.add_command(bench)


_register_bench()
