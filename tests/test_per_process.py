"""What each test process costs around it (issue 27): its private home removed on a thread of its own —
still removed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from explore.edges import homes


def test_a_private_home_is_gone_once_its_removals_are_drained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    roots = []
    for _ in range(3):
        with homes.private_home() as env:
            roots.append(Path(env["HOME"]).parent)
            (Path(env["XDG_CACHE_HOME"]) / "made-by-the-job").write_text("x")
            (Path(env["TMPDIR"]) / "scratch").mkdir()
    homes.drain()
    assert roots and not any(root.exists() for root in roots)
    assert not list(tmp_path.glob(f"{homes.PREFIX}*"))
