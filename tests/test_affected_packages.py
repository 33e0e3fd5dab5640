"""Affected-test selection in a package layout (found while benchmarking issue 5)."""

from __future__ import annotations

from pathlib import Path

from explore.decide.affected import ImportMap


def test_changing_one_module_of_a_package_selects_only_its_importers(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_a.py").write_text("from app.mod_a import f\n")
    (tmp_path / "tests/test_b.py").write_text("from app.mod_b import g\n")
    (tmp_path / "tests/test_pkg.py").write_text("import app\n")
    imap = ImportMap.build(tmp_path, {"tests/test_a.py", "tests/test_b.py", "tests/test_pkg.py"})
    selected = imap.affected_files(["app/mod_a.py"], ["tests/**"])
    assert selected is not None and "tests/test_a.py" in selected
    assert "tests/test_b.py" not in selected


def test_a_package_init_change_still_selects_its_submodules_importers(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_a.py").write_text("from app.mod_a import f\n")
    imap = ImportMap.build(tmp_path, {"tests/test_a.py"})
    assert imap.affected_files(["app/__init__.py"], ["tests/**"]) == {"tests/test_a.py"}
