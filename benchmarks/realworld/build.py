"""Build the real-library cases: pinned sdists, each with one injected one-line bug.

    python benchmarks/realworld/build.py [--cache DIR] [--only NAME ...]

For every case in cases.py:
1. the sdist, fetched once into CACHE/sdists with
   `pip download --no-binary NAME --no-deps NAME==VERSION` (see README.md for why not `:all:`);
2. a venv of its own, CACHE/venvs/NAME, with pytest, pytest-json-report, coverage and the suite's
   test dependencies, installed from the wheelhouse CACHE/wheels (filled on first use);
3. CACHE/cases/NAME/repo: the sdist unpacked, its suite run clean, the bug injected, the suite run
   again, the broken state committed as the only commit of a fresh git repository;
4. CACHE/cases/NAME/fix.patch (the reference fix, outside the repo) and case.json (the bug, the
   tests it breaks, the venv's python, the suite's time).

A second build reuses the sdists, wheels and venvs: it needs no network.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import BASE_REQUIREMENTS, CASES, Case

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "explore-realworld"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "realworld",
    "GIT_AUTHOR_EMAIL": "realworld@example.invalid",
    "GIT_COMMITTER_NAME": "realworld",
    "GIT_COMMITTER_EMAIL": "realworld@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


class BuildError(Exception):
    pass


def run(
    argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done


def fetch_sdist(case: Case, cache: Path) -> Path:
    folder = cache / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{case.library}_{case.version}".lower().replace("-", "_")

    def cached() -> list[Path]:
        return [p for p in folder.glob("*.tar.gz") if p.name.lower().replace("-", "_").startswith(stem)]

    if not cached():
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                case.library,
                "--no-deps",
                "-d",
                str(folder),
                f"{case.library}=={case.version}",
            ]
        )
    if not cached():
        raise BuildError(f"{case.name}: pip downloaded no sdist named {stem}*.tar.gz into {folder}")
    return cached()[0]


def ensure_venv(case: Case, cache: Path) -> Path:
    """The case's venv; rebuilt when its requirements change. Returns its python."""
    requirements = BASE_REQUIREMENTS + case.requirements
    venv = cache / "venvs" / case.name
    marker = venv / "requirements.txt"
    python = venv / "bin" / "python"
    if marker.exists() and marker.read_text() == "\n".join(requirements) and python.exists():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", str(venv)])
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    offline = [str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheels), *requirements]
    if subprocess.run(offline, capture_output=True).returncode != 0:
        run([str(python), "-m", "pip", "download", "-q", "--only-binary", ":all:", "-d", str(wheels), *requirements])
        run(offline)
    marker.write_text("\n".join(requirements))
    return python


def pythonpath(repo: Path) -> str:
    """What explore puts on PYTHONPATH for a worktree (testing.isolation_env)."""
    return os.pathsep.join(([str(repo / "src")] if (repo / "src").is_dir() else []) + [str(repo)])


def run_suite(python: Path, repo: Path) -> tuple[dict[str, str], float]:
    """Every test's outcome, and the suite's wall time (as explore's baseline runs it)."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        env = {**os.environ, "PYTHONPATH": pythonpath(repo)}
        env.pop("VIRTUAL_ENV", None)
        start = time.monotonic()
        subprocess.run(
            [
                str(python),
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
                "-rN",
                "--json-report",
                f"--json-report-file={report}",
                "--json-report-omit",
                "log",
                "streams",
                "warnings",
            ],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.monotonic() - start
        if not report.exists():
            raise BuildError(f"pytest wrote no report in {repo}")
        data = json.loads(report.read_text())
    outcomes = {t["nodeid"]: t["outcome"] for t in data.get("tests", [])}
    for c in data.get("collectors", []):
        if c.get("outcome") == "failed":
            outcomes[c["nodeid"] or "<collection>"] = "error"
    return outcomes, seconds


def failing(outcomes: dict[str, str]) -> set[str]:
    return {t for t, o in outcomes.items() if o in ("failed", "error")}


def unpack(sdist: Path, dest: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch, tarfile.open(sdist) as tar:
        tar.extractall(scratch, filter="data")
        (top,) = Path(scratch).iterdir()
        shutil.copytree(top, dest)


def inject(case: Case, repo: Path) -> tuple[int, str]:
    """Replace the bug's line (exactly one occurrence, never in a test file). Returns (line number, fix patch)."""
    if any(case.bug.path.startswith(p.rstrip("/")) for p in case.test_paths):
        raise BuildError(f"{case.name}: the bug is in a test file ({case.bug.path})")
    target = repo / case.bug.path
    before = target.read_text()
    lines = before.splitlines(keepends=True)
    hits = [
        i
        for i, line in enumerate(lines)
        if line.rstrip("\n") == case.bug.line
        and (not case.bug.after or (i > 0 and lines[i - 1].rstrip("\n") == case.bug.after))
    ]
    if len(hits) != 1:
        raise BuildError(f"{case.name}: {len(hits)} lines of {case.bug.path} match the bug's line, expected 1")
    (i,) = hits
    lines[i] = case.bug.broken + "\n"
    target.write_text("".join(lines))
    fix = difflib.unified_diff(lines, before.splitlines(keepends=True), f"a/{case.bug.path}", f"b/{case.bug.path}")
    return i + 1, "".join(fix)


def build(case: Case, cache: Path) -> dict:
    sdist = fetch_sdist(case, cache)
    python = ensure_venv(case, cache)
    # Built beside the cases, then renamed into place: a reader of CACHE/cases never sees a half-built case.
    (cache / "building").mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{case.name}-", dir=cache / "building"))
    folder.chmod(0o755)  # as a plain mkdir makes it
    try:
        record = build_into(case, python, sdist, folder)
        place(folder, cache / "cases" / case.name)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return record


def place(built: Path, final: Path) -> None:
    """Swap the built case in by renames (the old one, if any, leaves first; the gap is two renames)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    old = built.parent / f"{built.name}.old"
    if final.exists():
        final.rename(old)
    built.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def build_into(case: Case, python: Path, sdist: Path, folder: Path) -> dict:
    repo = folder / "repo"
    unpack(sdist, repo)
    for path, old, new in case.config_edits:
        text = (repo / path).read_text()
        if old not in text:
            raise BuildError(f"{case.name}: config edit does not apply to {path}")
        (repo / path).write_text(text.replace(old, new))
    clean, clean_seconds = run_suite(python, repo)
    line_no, fix = inject(case, repo)
    broken, broken_seconds = run_suite(python, repo)
    broken_by_bug = sorted(failing(broken) - failing(clean))
    if not broken_by_bug:
        raise BuildError(f"{case.name}: the injected bug fails no test")
    for leftover in repo.rglob("__pycache__"):
        shutil.rmtree(leftover, ignore_errors=True)
    gitignore = repo / ".gitignore"
    gitignore.write_text((gitignore.read_text() if gitignore.exists() else "") + "\n__pycache__/\n*.pyc\n")
    env = {**os.environ, **GIT_ENV}
    run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env)
    run(["git", "add", "-A"], cwd=repo, env=env)
    run(["git", "commit", "-q", "-m", f"{case.library} {case.version}"], cwd=repo, env=env)
    (folder / "fix.patch").write_text(fix)
    record = {
        "name": case.name,
        "library": case.library,
        "version": case.version,
        "sdist": sdist.name,
        "bug": {
            "path": case.bug.path,
            "line": line_no,
            "original": case.bug.line,
            "broken": case.bug.broken,
            "kind": case.bug.kind,
        },
        "python": str(python),
        "test_paths": case.test_paths,
        "tests": len(broken),
        "failing_by_bug": broken_by_bug,
        "failing_before_bug": sorted(failing(clean)),
        "suite_seconds": round((clean_seconds + broken_seconds) / 2, 2),
        "requirements": BASE_REQUIREMENTS + case.requirements,
        "why_requirements": case.why_requirements,
    }
    (folder / "case.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"default {DEFAULT_CACHE}")
    parser.add_argument("--only", action="append", default=[], help="build only this case (repeatable)")
    args = parser.parse_args()
    chosen = [c for c in CASES if not args.only or c.name in args.only]
    for kind in ("cases", "venvs"):  # cases renamed or dropped since the last build
        for stale in (args.cache / kind).glob("*") if (args.cache / kind).is_dir() else []:
            if stale.name not in {c.name for c in CASES}:
                shutil.rmtree(stale)
    failures = 0
    for case in chosen:
        start = time.monotonic()
        try:
            r = build(case, args.cache)
        except BuildError as exc:
            failures += 1
            print(f"{case.name}: NOT BUILT: {exc}", file=sys.stderr)
            continue
        before = f", {len(r['failing_before_bug'])} failing before it" if r["failing_before_bug"] else ""
        print(
            f"{case.name}: {r['tests']} tests, {len(r['failing_by_bug'])} broken by the bug{before}, "
            f"suite {r['suite_seconds']} s, built in {time.monotonic() - start:.0f} s"
        )
    print(f"{len(chosen) - failures}/{len(chosen)} cases in {args.cache / 'cases'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
