"""What the installed release of a named agent's CLI accepts, learned once per run: its version (the
npm package's own package.json when the binary is one's, else `--version`) and its `--help` (cached
per binary path and modification time), so an adapter passes only flags that release knows, and a
release too old to run safely stops the run before its first candidate.

The rule is stated once, per adapter: `required` flags (without them the agent could wait on a
prompt or reach past its worktree: no candidate runs), `optional` flags (each dropped, with its
values, when the release does not list it), and `minimum`, the oldest release explore is tested
with (older: refused). A CLI whose version or help cannot be read (a wrapper script, a stand-in)
is taken as the release explore's flags are written for."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...model.errors import UsageError

VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
PROBE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Capabilities:
    """One installed CLI: its version (None: unreadable) and the text of its help (empty: unreadable)."""

    version: str | None
    help: str

    def knows(self, flag: str) -> bool:
        """The help lists the flag (an unreadable help knows every flag: nothing is dropped)."""
        if not self.help.strip():
            return True
        return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", self.help) is not None


@dataclass(frozen=True)
class Support:
    """An adapter's rule: what a release must accept, what may be left out, and the oldest release supported."""

    required: tuple[str, ...] = ()
    optional: dict[str, int] | None = None
    """Flag → how many values follow it."""
    minimum: str | None = None
    help_args: tuple[str, ...] = ("--help",)


_LEARNED: dict[tuple[str, int], Capabilities] = {}


def learn(binary: str, help_args: tuple[str, ...], env: dict[str, str]) -> Capabilities:
    """The CLI's version and help, asked once per binary (path and mtime) in this process."""
    path = Path(binary)
    key = (str(path.resolve()), path.stat().st_mtime_ns)
    if key not in _LEARNED:
        found = VERSION.search(package_version(path) or _ask([binary, "--version"], env))
        _LEARNED[key] = Capabilities(found.group(0) if found else None, _ask([binary, *help_args], env))
    return _LEARNED[key]


def package_version(binary: Path) -> str | None:
    """The version an npm package declares for the executable it installs (`bin` in the nearest
    package.json above the file the binary resolves to): no process started — a CLI's start-up is
    its probe's cost (Gemini CLI's, seconds). None when the binary is no npm package's."""
    real = binary.resolve()
    for folder in real.parents:
        manifest = folder / "package.json"
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        bins = data.get("bin")
        targets = [bins] if isinstance(bins, str) else list(bins.values()) if isinstance(bins, dict) else []
        version = data.get("version")
        if isinstance(version, str) and any(isinstance(t, str) and (folder / t).resolve() == real for t in targets):
            return version
        return None
    return None


def _ask(argv: list[str], env: dict[str, str]) -> str:
    """What the command printed when it exited 0 within the probe's time; else nothing."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            env={**os.environ, **env},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if done.returncode != 0:
        return ""
    return done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")


def older(version: str, than: str) -> bool:
    def parts(v: str) -> tuple[int, ...]:
        found = VERSION.search(v)
        return tuple(int(x) for x in found.groups()) if found else ()

    return parts(version) < parts(than)


def check(name: str, caps: Capabilities, support: Support, binary: str) -> None:
    """A UsageError (exit 2) naming the agent, the release found and the oldest supported, when the
    installed release is older than the minimum or lacks a flag explore cannot run it safely without."""
    found = caps.version or "an unknown release"
    oldest = f"{support.minimum} or newer" if support.minimum else "a newer release"
    missing = [flag for flag in support.required if not caps.knows(flag)]
    if caps.version and support.minimum and older(caps.version, support.minimum):
        why = f"older than {support.minimum}, the oldest release explore runs"
    elif missing:
        why = f"its --help lists no {', '.join(missing)}, without which it could wait on a prompt or edit outside its worktree"
    else:
        return
    raise UsageError(
        f"--agent {name}: {binary} is {found} ({why}); explore needs {oldest}: update it, or point "
        f"[tool.explore.agents.{name}] bin at a newer one"
    )


def fit(flags: list[str], caps: Capabilities, support: Support) -> list[str]:
    """The flags without the optional ones this release does not know (and their values)."""
    optional = support.optional or {}
    kept: list[str] = []
    skip = 0
    for flag in flags:
        if skip:
            skip -= 1
            continue
        if flag in optional and not caps.knows(flag):
            skip = optional[flag]
            continue
        kept.append(flag)
    return kept
