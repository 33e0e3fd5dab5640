"""_hotswap: a mutant given to already-imported functions only when that equals a fresh import.
Real modules written to a temporary folder and imported; no process."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from explore.generators.mutate._hotswap import Live, changed_functions

MODULE = textwrap.dedent("""\
    import functools

    LIMIT = 10


    def area(w, h):
        return w + h


    alias = area


    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args)
        return wrapper


    @logged
    def double(x):
        return x + x


    class Box:
        size = 3

        def volume(self):
            return self.size + 1

        @property
        def label(self):
            return "box"
    """)


def code(text: str):
    return compile(text, "m.py", "exec")


def test_function_bodies_that_change_are_the_pairs() -> None:
    pairs = changed_functions(
        code(MODULE), code(MODULE.replace("return w + h", "return w * h").replace("self.size + 1", "self.size - 1"))
    )
    assert pairs is not None and sorted(old.co_name for old, _ in pairs) == ["area", "volume"]


def test_a_line_inserted_above_moves_later_functions_without_changing_them() -> None:
    moved = MODULE.replace("    return w + h\n", "    w = w\n    return w + h\n")
    pairs = changed_functions(code(MODULE), code(moved))
    assert pairs is not None and [old.co_name for old, _ in pairs] == ["area"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("LIMIT = 10", "LIMIT = 11"),  # module state
        ("size = 3", "size = 4"),  # a class attribute
        ("def area(w, h):", "def area(w, h=1):"),  # a default value lives in the module's code
        ("alias = area", "alias = double"),
    ],
)
def test_anything_but_function_bodies_is_not_swappable(old: str, new: str) -> None:
    assert changed_functions(code(MODULE), code(MODULE.replace(old, new))) is None


@pytest.fixture
def imported(tmp_path: Path) -> Iterator[tuple[object, Live, Path]]:
    name = f"hotswap_m_{tmp_path.name.replace('-', '_')}"
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE + "\nFIRST = area(1, 1)\n", encoding="utf-8")
    live = Live(str(tmp_path))
    sys.path.insert(0, str(tmp_path))
    sys.setprofile(live.profile)
    try:
        module = importlib.import_module(name)
    finally:
        sys.setprofile(None)
    live.index()
    try:
        yield module, live, path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def test_live_functions_take_the_new_code_wherever_they_are_held(imported: tuple) -> None:
    module, live, path = imported
    text = path.read_text().replace("return x + x", "return x * 3").replace("self.size + 1", "self.size * 2")
    wrapper_before = module.double
    assert live.swap({str(path): text}, {str(path.resolve())})
    assert module.double(2) == 6 and wrapper_before(2) == 6  # the decorated original, through its wrapper
    assert module.Box().volume() == 6


def test_a_function_that_ran_at_import_is_not_swapped(imported: tuple) -> None:
    """`FIRST = area(1, 1)` ran at import: its value came from the old code, a fresh import of the
    mutant would compute another — so the caller must import afresh."""
    module, live, path = imported
    assert not live.swap({str(path): path.read_text().replace("return w + h", "return w * h")}, {str(path.resolve())})
    assert module.area(2, 3) == 5 and module.alias(2, 3) == 5  # nothing changed


def test_a_module_level_change_is_not_swapped_and_changes_nothing(imported: tuple) -> None:
    module, live, path = imported
    text = path.read_text().replace("return x + x", "return x * 3").replace("size = 3", "size = 4")
    assert not live.swap({str(path): text}, {str(path.resolve())})
    assert module.double(2) == 4 and module.Box.size == 3


def test_a_file_not_imported_here_needs_no_swap(imported: tuple, tmp_path: Path) -> None:
    _, live, _ = imported
    assert live.swap({str(tmp_path / "other.py"): "def f():\n    return 2\n"}, set())
