"""Live progress on stderr: phases, each iteration's strategy, each candidate's state."""

from __future__ import annotations

import time

from rich.console import Console


class Display:
    """Line-oriented so it reads the same in a terminal and in a CI log."""

    def __init__(self, quiet: bool = False) -> None:
        self.console = Console(stderr=True, highlight=False, soft_wrap=True)
        self.quiet = quiet
        self.started = time.monotonic()

    def _print(self, text: str, style: str = "") -> None:
        if not self.quiet:
            elapsed = time.monotonic() - self.started
            self.console.print(f"[dim]{elapsed:7.1f}s[/dim] {text}", style=style, markup=True)

    def phase(self, text: str) -> None:
        self._print(f"[bold]{_escape(text)}[/bold]")

    def note(self, text: str) -> None:
        self._print(_escape(text))

    def candidates(self, ids: list[str]) -> None:
        self._print(f"  fan out: {len(ids)} candidate(s) {', '.join(ids)}")

    def candidate(self, cid: str, text: str) -> None:
        self._print(f"  [{cid}] {_escape(text)}".replace(f"[{cid}]", f"\\[{cid}]", 1))


def _escape(text: str) -> str:
    return text.replace("[", "\\[")
