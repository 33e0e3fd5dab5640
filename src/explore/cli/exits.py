"""How a command ends on an error: the message on stderr (and the JSON error object under --json), the exit code."""

from __future__ import annotations

import json
import sys

import click


def fail(message: str, code: int, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"status": "error", "exit_code": code, "error": message}))
    click.echo(f"explore: error: {message}", err=True)
    sys.exit(code)
