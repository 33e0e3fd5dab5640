"""A failing test that no edit ever moves is set aside after two iterations running: the run says
so, stops spending iterations on it, and the history makes a later run set it aside sooner.
Real git repositories, real explore processes, mutate."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import assert_no_debris, git, make_repo, run_cli

FILES = {
    "shop.py": """\
        import os


        def total(prices):
            return sum(prices) - 1


        def api_token():
            return os.environ.get("SHOP_API_TOKEN", "")
        """,
    "tests/test_shop.py": """\
        from shop import api_token, total


        def test_total():
            assert total([1, 2]) == 3


        def test_total_empty():
            assert total([]) == 0


        def test_token_is_configured():
            assert api_token().startswith("tok-")
        """,
}
TOKEN = "tests/test_shop.py::test_token_is_configured"


def test_an_unmovable_failure_is_set_aside_and_remembered(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    code, summary, err = run_cli(["run", str(root), "--agent", "mutate", "--max-iterations", "5", "--json"])
    assert summary is not None, err
    assert code != 0 and summary["status"] == "failed"
    assert summary["set_aside"] == [TOKEN]
    assert summary["remaining_failures"] == [TOKEN]
    assert len(summary["iterations"]) == 2, [
        i["generator_note"] for i in summary["iterations"]
    ]  # not 5, nor 1 + 3 without progress
    assert summary["iterations"][0]["winner"] is not None  # the real bug was repaired on the way
    assert "set-aside" in (summary["stop_reason"] or "")
    assert "## Set aside" in Path(summary["report"]).read_text()
    records = [json.loads(line) for line in (root / ".explore" / "history.jsonl").read_text().splitlines()]
    assert records[-1]["set_aside"] == [TOKEN]
    assert_no_debris(root)

    # A later run on the same (still buggy) commit: the history makes one unmoved iteration enough.
    assert git(root, "rev-parse", "HEAD") == git(root, "rev-parse", "main")
    code, again, err = run_cli(["run", str(root), "--agent", "mutate", "--max-iterations", "5", "--json"])
    assert again is not None, err
    assert again["set_aside"] == [TOKEN] and len(again["iterations"]) == 1
    assert_no_debris(root)
