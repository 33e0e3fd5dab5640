"""Load benchmark cases: folders holding a project (or a git repo), an optional fix and checks."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.errors import UsageError


@dataclass(frozen=True)
class Case:
    """One broken project of the corpus."""

    name: str
    root: Path
    """The case folder."""
    project: Path
    """What explore sees: `project/`, or the case folder itself when it is a bare project/repo."""
    defect_class: str = "unlabelled"
    description: str = ""
    edits: int = 1
    family: str = ""
    """The stubborn corpus' family (multi_bug, masked, ...); empty for the original corpus."""
    runs: int = 1
    """explore runs in a row on the same repo (history cases: the second run starts from the first's records)."""
    fix_patch: Path | None = None
    checks: Path | None = None


def load_case(folder: Path) -> Case:
    """A case from its folder; `case.toml`, `fix.patch` and `checks/` are all optional."""
    meta: dict[str, Any] = {}
    toml = folder / "case.toml"
    if toml.is_file():
        meta = tomllib.loads(toml.read_text(encoding="utf-8"))
    project = folder / "project" if (folder / "project").is_dir() else folder
    fix = folder / "fix.patch"
    checks = folder / "checks"
    return Case(
        name=folder.name,
        root=folder,
        project=project,
        defect_class=str(meta.get("class", "unlabelled")),
        description=str(meta.get("description", "")),
        edits=int(meta.get("edits", 1)),
        family=str(meta.get("family", "")),
        runs=max(1, int(meta.get("runs", 1))),
        fix_patch=fix if fix.is_file() else None,
        checks=checks if checks.is_dir() and project != folder else None,
    )


def is_case(folder: Path) -> bool:
    """A case folder holds `case.toml` or a `project/` folder."""
    return folder.is_dir() and ((folder / "case.toml").is_file() or (folder / "project").is_dir())


def load_corpus(cases_dir: Path, only: list[str] | None = None) -> list[Case]:
    """Every case under cases_dir, sorted by name (or cases_dir itself when it is one case)."""
    if not cases_dir.is_dir():
        raise UsageError(f"cases folder not found: {cases_dir}")
    if is_case(cases_dir):
        cases = [load_case(cases_dir)]
    else:
        cases = [load_case(p) for p in sorted(cases_dir.iterdir()) if is_case(p)]
    if only:
        unknown = sorted(set(only) - {c.name for c in cases})
        if unknown and cases:
            raise UsageError(
                f"--case {', '.join(unknown)}: no such case in {cases_dir}; its cases: {', '.join(c.name for c in cases)}"
            )
        cases = [c for c in cases if c.name in set(only)]
    if not cases:
        raise UsageError(f"no benchmark cases in {cases_dir} (a case folder holds case.toml or project/)")
    return cases
