"""The git config files outside the repository that git reads for every repository of this user,
and the files those config files include: what the guard fingerprints beside the repository's own."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from explore.edges.gitcmd import GIT


def global_config_paths() -> list[Path]:
    """The files outside the repository that git reads for every repository of this user: the
    global config (`GIT_CONFIG_GLOBAL`, else `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config`), the
    system config (`GIT_CONFIG_SYSTEM`, else /etc/gitconfig), and the global attributes and ignore
    files beside the XDG config. (The files they include: `included`.)"""
    home = Path(os.path.expanduser("~"))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "git"
    found = [Path(os.environ["GIT_CONFIG_GLOBAL"])] if os.environ.get("GIT_CONFIG_GLOBAL") else []
    found += [home / ".gitconfig", xdg / "config", xdg / "attributes", xdg / "ignore"]
    found.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    return [path.absolute() for path in found if str(path) != os.devnull]


INCLUDE_KEYS = r"^include(if\..*)?\.path$"
"""`include.path` and `includeIf.<condition>.path`, as `git config --get-regexp` names them."""


def included(configs: list[Path], depth: int = 10) -> list[Path]:
    """The files the config files among configs include (`include.path`, `includeIf.*.path`,
    whatever the condition: one a candidate can make true), followed to depth; a relative path is
    relative to the including file's folder, as git reads it."""
    found: list[Path] = []
    seen = set(configs)
    queue = [(path, 0) for path in configs]
    while queue:
        path, level = queue.pop()
        try:
            if level >= depth or b"include" not in path.read_bytes().lower():
                continue
        except OSError:
            continue
        listed = subprocess.run(
            [*GIT, "config", "--file", str(path), "--null", "--get-regexp", INCLUDE_KEYS], capture_output=True
        )
        for entry in filter(None, listed.stdout.split(b"\0")):
            _, _, value = entry.partition(b"\n")
            target = Path(os.path.expanduser(value.decode("utf-8", "surrogateescape")))
            target = (target if target.is_absolute() else path.parent / target).absolute()
            if value and target not in seen:
                seen.add(target)
                found.append(target)
                queue.append((target, level + 1))
    return found
