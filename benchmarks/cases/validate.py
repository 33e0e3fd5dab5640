#!/usr/bin/env python
"""Validate the benchmark cases in this directory.

Usage: python benchmarks/cases/validate.py [case names...]

For every case (or only the named ones) this:
  1. copies project/ to a temporary directory and runs its visible tests:
     at least one must fail and at least one must pass (the bug is visible,
     the suite is not all red);
  2. runs checks/ against the buggy project: these should fail too
     (a warning, not an error, if they don't);
  3. initialises a git repo in the copy, applies fix.patch with `git apply`
     and requires every visible test and every check to pass;
  4. sanity-checks case.toml (class label, edits, two_line).

Prints a table and exits non-zero if any case is broken.
Only the standard library and pytest are needed.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = None

HERE = Path(__file__).resolve().parent
DEFAULT_PYTHON = "/work/venv/bin/python"
PYTHON = os.environ.get("CASES_PYTHON") or (DEFAULT_PYTHON if Path(DEFAULT_PYTHON).exists() else sys.executable)
TIMEOUT = 60

CLASSES = {
    "wrong_comparison", "off_by_one", "wrong_arithmetic", "wrong_boolean",
    "wrong_variable", "swapped_arguments", "missing_negation", "wrong_constant",
    "wrong_return", "missing_statement", "extra_statement", "wrong_index",
    "loop_bound", "missing_call", "missing_guard", "wrong_condition", "extra_call", "wrong_argument",
}


def read_toml(path: Path) -> dict:
    text = path.read_text()
    if tomllib is not None:
        return tomllib.loads(text)
    out = {}
    for line in text.splitlines():
        m = re.match(r'\s*(\w+)\s*=\s*(.+?)\s*$', line)
        if m:
            key, val = m.groups()
            if val.startswith('"'):
                out[key] = val[1:-1]
            elif val in ("true", "false"):
                out[key] = val == "true"
            else:
                out[key] = int(val)
    return out


def run(cmd, cwd, env=None):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def pytest_counts(args, cwd: Path, project: Path):
    """Run pytest; return (passed, failed_or_errored, seconds, output).

    seconds is pytest's own reported session time (interpreter start-up excluded)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(project) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    cmd = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(project),
           "-c", str(project / "pyproject.toml"), *args]
    t0 = time.monotonic()
    try:
        proc = run(cmd, cwd, env)
    except subprocess.TimeoutExpired:
        return 0, 1, TIMEOUT, "TIMEOUT"
    dt = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    m = re.search(r" in (\d+(?:\.\d+)?)s", out)
    if m:
        dt = float(m.group(1))
    counts = {}
    for n, word in re.findall(r"(\d+) (passed|failed|errors?)\b", out):
        counts[word.rstrip("s")] = counts.get(word.rstrip("s"), 0) + int(n)
    passed = counts.get("passed", 0)
    failed = counts.get("failed", 0) + counts.get("error", 0)
    if proc.returncode not in (0, 1) and failed == 0:
        failed = 1  # collection/usage error
    return passed, failed, dt, out


def validate(case: Path):
    errors, warnings = [], []
    info = {"name": case.name, "class": "?", "edits": "?"}
    meta_path = case / "case.toml"
    if not meta_path.exists():
        return info, ["missing case.toml"], warnings, {}
    meta = read_toml(meta_path)
    info["class"] = meta.get("class", "?")
    info["edits"] = meta.get("edits", "?")
    if meta.get("class") not in CLASSES:
        errors.append("unknown class %r" % meta.get("class"))
    if not meta.get("description"):
        errors.append("missing description")
    if meta.get("edits") not in (1, 2):
        errors.append("edits must be 1 or 2")
    if (meta.get("edits") == 2) != bool(meta.get("two_line", False)):
        errors.append("two_line must be true exactly when edits = 2")
    for rel in ("project", "project/tests", "project/pyproject.toml", "fix.patch", "checks/test_reference.py"):
        if not (case / rel).exists():
            errors.append("missing " + rel)
    if errors:
        return info, errors, warnings, {}

    stats = {}
    with tempfile.TemporaryDirectory(prefix="case-%s-" % case.name) as tmp:
        tmp = Path(tmp)
        project = tmp / "project"
        shutil.copytree(case / "project", project,
                        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        checks = tmp / "checks"
        shutil.copytree(case / "checks", checks, ignore=shutil.ignore_patterns("__pycache__"))

        # 1. buggy visible tests
        p, f, dt, out = pytest_counts(["tests"], project, project)
        stats["buggy"] = "%d/%d" % (p, p + f)
        stats["time"] = dt
        if f < 1:
            errors.append("buggy: no visible test fails")
        if p < 1:
            errors.append("buggy: no visible test passes")
        if out == "TIMEOUT":
            errors.append("buggy: visible tests time out")
        elif dt > 1.0:
            warnings.append("buggy visible suite took %.2fs (> 1 s)" % dt)

        # 2. buggy checks
        p, f, _, out = pytest_counts([str(checks)], project, project)
        stats["checks_buggy"] = "%d/%d" % (p, p + f)
        if f < 1:
            warnings.append("checks/ pass on the buggy project")

        # 3. apply the fix
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"]):
            run(cmd, project)
        proc = run(["git", "apply", "--whitespace=nowarn", str(case / "fix.patch")], project)
        if proc.returncode != 0:
            errors.append("git apply failed: " + proc.stderr.strip())
            return info, errors, warnings, stats
        proc = run(["git", "diff", "--numstat"], project)
        changed = [line for line in proc.stdout.splitlines() if line.strip()]
        stats["files"] = len(changed)

        p, f, dt, out = pytest_counts(["tests"], project, project)
        stats["fixed"] = "%d/%d" % (p, p + f)
        if f or not p:
            errors.append("fixed: visible tests fail\n" + out[-1500:])
        elif dt > 1.0:
            warnings.append("fixed visible suite took %.2fs (> 1 s)" % dt)
        p, f, _, out = pytest_counts([str(checks)], project, project)
        stats["checks_fixed"] = "%d/%d" % (p, p + f)
        if f or not p:
            errors.append("fixed: checks fail\n" + out[-1500:])
    return info, errors, warnings, stats


def main(argv):
    names = argv[1:]
    if names:
        cases = [HERE / n for n in names]
        missing = [c.name for c in cases if not c.is_dir()]
        if missing:
            print("unknown case(s): " + ", ".join(missing))
            return 2
    else:
        cases = sorted(p for p in HERE.iterdir() if p.is_dir() and (p / "case.toml").exists())

    header = "%-28s %-18s %5s %7s %7s %7s %7s %6s  %s" % (
        "case", "class", "edits", "buggy", "chk-bug", "fixed", "chk-fix", "secs", "status")
    print(header)
    print("-" * len(header))
    broken, warned, per_class = [], [], {}
    for case in cases:
        info, errors, warnings, stats = validate(case)
        status = "BROKEN" if errors else ("warn" if warnings else "ok")
        print("%-28s %-18s %5s %7s %7s %7s %7s %6.2f  %s" % (
            info["name"], info["class"], info["edits"], stats.get("buggy", "-"),
            stats.get("checks_buggy", "-"), stats.get("fixed", "-"),
            stats.get("checks_fixed", "-"), stats.get("time", 0.0), status))
        for e in errors:
            print("    ERROR: " + e.replace("\n", "\n      "))
        for w in warnings:
            print("    warning: " + w)
        if errors:
            broken.append(info["name"])
        if warnings:
            warned.append(info["name"])
        per_class[info["class"]] = per_class.get(info["class"], 0) + 1

    print()
    print("per class: " + ", ".join("%s=%d" % kv for kv in sorted(per_class.items())))
    print("%d cases, %d broken, %d with warnings" % (len(cases), len(broken), len(warned)))
    if broken:
        print("broken: " + ", ".join(broken))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
