"""Which tests a change can affect: a static import map of the test files.

Chosen over per-test coverage collected at baseline because it costs nothing at baseline (a
coverage-context run is several times slower than a plain one) and its misses — a dependency
it cannot see, like a data file read at run time — cost only time: the winner is always
validated on the full suite before it is merged.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..model.testfiles import is_test_file
from . import parsing


def module_names(path: str) -> set[str]:
    """Dotted names a file can be imported as: `src/pkg/mod.py` → {pkg.mod, pkg}, `mod.py` → {mod}."""
    parts = Path(path).with_suffix("").parts
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if len(parts) > 1 and parts[0] in ("src", "lib"):  # the layout's folder, not a module or package named so
        parts = parts[1:]
    names = set()
    for cut in range(len(parts), 0, -1):
        names.add(".".join(parts[:cut]))
    # a flat layout with its folder on sys.path (pythonpath = ["src"] or tests importing `mod`)
    if parts:
        names.add(parts[-1])
    return names


def own_names(path: str) -> set[str]:
    """The names that denote this very module (not its parent packages): its full dotted name,
    and its last part for a folder put on sys.path."""
    names = module_names(path)
    if not names:  # a root __init__.py: no importable name
        return set()
    full = max(names, key=len)
    return {full, full.rsplit(".", 1)[-1]}


def imports_of(source: str) -> set[str]:
    try:
        tree = parsing.parse(source)
    except (SyntaxError, ValueError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@dataclass
class ImportMap:
    """Test file → the modules it imports; built once per run from the baseline's test files."""

    imports: dict[str, set[str]] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    """Test file → a digest of the text its imports were read from (what `build` may reuse)."""

    @classmethod
    def build(cls, root: Path, test_files: Iterable[str], known: ImportMap | None = None) -> ImportMap:
        """known: a map built earlier (while the baseline ran, from the files on disk): a file whose
        text is the one it read keeps its imports, unparsed (on networkx's 257 test files the parse
        is 1.5-3 s of CPU); any other is read afresh."""
        result = cls()
        for name in sorted(test_files):
            path = root / name
            if path.is_file() and name.endswith(".py"):
                text = path.read_text(encoding="utf-8", errors="replace")
                digest = hashlib.blake2b(text.encode("utf-8", errors="replace"), digest_size=16).hexdigest()
                kept = known.imports.get(name) if known is not None and known.digests.get(name) == digest else None
                result.imports[name] = kept if kept is not None else imports_of(text)
                result.digests[name] = digest
        return result

    def affected_files(self, changed: list[str], test_patterns: list[str]) -> set[str] | None:
        """Test files that import a changed module; None means "cannot tell: run everything"."""
        selected: set[str] = set()
        for path in changed:
            if not path.endswith(".py") or Path(path).name == "conftest.py":
                return None
            if is_test_file(path, test_patterns):
                if path in self.imports:
                    selected.add(path)
                continue
            names = own_names(path)
            if not names:
                return None  # cannot tell who imports it: run everything
            for test_file, imported in self.imports.items():
                if any(i == n or i.startswith(n + ".") for i in imported for n in names):
                    selected.add(test_file)
        return selected
