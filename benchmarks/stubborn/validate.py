#!/usr/bin/env python
"""Validate the stubborn cases: the same checks as benchmarks/cases/validate.py, on this folder.

Usage: python benchmarks/stubborn/validate.py [case names...]
"""

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAMILIES = {"multi_bug", "masked", "two_location", "regression_trap", "history", "flaky"}

_spec = importlib.util.spec_from_file_location("cases_validate", HERE.parent / "cases" / "validate.py")
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)
base.HERE = HERE
_validate = base.validate


def validate(case: Path):
    info, errors, warnings, stats = _validate(case)
    family = base.read_toml(case / "case.toml").get("family") if (case / "case.toml").exists() else None
    if family not in FAMILIES:
        errors.append("family must be one of %s, not %r" % (", ".join(sorted(FAMILIES)), family))
    return info, errors, warnings, stats


base.validate = validate

if __name__ == "__main__":
    sys.exit(base.main(sys.argv))
