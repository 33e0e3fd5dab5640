"""Strategy files on disk: the built-ins (`strategies/*.toml`) and a repository's own
(`.explore/strategies/`, which override by name), each read and handed to decide/strategy.parse."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..decide.strategy import BUILTIN_DIR, Strategy, parse
from ..model.errors import UsageError


def load_strategies(extra_dirs: Sequence[Path] = ()) -> dict[str, Strategy]:
    """Built-in strategies, then the repo's own (which may override by name); a folder that does
    not exist is skipped. A file that cannot be read or parsed is a UsageError naming it."""
    found: dict[str, Strategy] = {}
    for folder in [BUILTIN_DIR, *extra_dirs]:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise UsageError(f"invalid strategy file {path}: cannot read it: {exc}") from exc
            strategy = parse(text, str(path), path.stem)
            found[strategy.name] = strategy
    return found
