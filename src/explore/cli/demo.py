"""`explore demo`: a small buggy project in a fresh git repository, to repair offline."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

FILES = {
    "pricing.py": '''"""Order pricing for a small shop."""


def line_total(price_cents: int, quantity: int) -> int:
    return price_cents + quantity


def bulk_discount(quantity: int) -> float:
    """10% off from 10 items on."""
    if quantity > 10:
        return 0.10
    return 0.0


def order_total(lines: list[tuple[int, int]]) -> int:
    total = 0
    for price, quantity in lines:
        gross = line_total(price, quantity)
        total += round(gross * (1 - bulk_discount(quantity)))
    return total
''',
    "tests/test_pricing.py": """from pricing import bulk_discount, line_total, order_total


def test_line_total():
    assert line_total(250, 4) == 1000


def test_line_total_single():
    assert line_total(99, 1) == 99


def test_no_discount_below_ten():
    assert bulk_discount(9) == 0.0


def test_discount_from_ten():
    assert bulk_discount(10) == 0.10


def test_discount_above_ten():
    assert bulk_discount(25) == 0.10


def test_order_total():
    assert order_total([(100, 2), (50, 10)]) == 200 + 450


def test_order_total_single_bulk_line():
    assert order_total([(100, 20)]) == 1800
""",
    "pyproject.toml": """[tool.pytest.ini_options]
pythonpath = ["."]
testpaths = ["tests"]

[tool.explore]
python = "{python}"
""",
    ".gitignore": "__pycache__/\n",
}


def create_demo(folder: Path | None = None) -> Path:
    target = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="explore-demo-"))
    target.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{python}", sys.executable), encoding="utf-8")
    env_args = ["-c", "user.name=explore demo", "-c", "user.email=demo@localhost"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=target, check=True)
    subprocess.run(["git", "add", "-A"], cwd=target, check=True)
    subprocess.run(["git", *env_args, "commit", "-q", "-m", "demo: a shop with two bugs"], cwd=target, check=True)
    return target
