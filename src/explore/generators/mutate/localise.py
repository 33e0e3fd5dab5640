"""Spectrum-based fault localisation: per-test line coverage, then a suspiciousness per line.

One pytest run in the scratch worktree with the project's interpreter — or the loop's baseline
itself, when it can carry the measurement — where a small plugin (_worker.py) starts coverage
through its API, switches its dynamic context to each test's node id, and reads the data back
in the same process (`contexts_by_lineno`), so every test's lines come out of one run with exact
pytest ids (coverage's own `test_function` contexts lose parametrisation and classes). Without
coverage in the project's interpreter the same plugin traces lines itself.
"""

from __future__ import annotations

import ast
import json
import math
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ...decide import parsing
from ...edges import homes, procs
from ...edges.testing import HARD_EXIT, Hangs, carried_hangs, deselect_listing, isolation_env, plugin_args
from ...model import testfiles
from .formulas import DEFAULT_FORMULA as DEFAULT_FORMULA
from .formulas import FORMULAS as FORMULAS

PLUGIN_NAME = "_explore_mutate_worker"
IMPORT_TIME = ""
"""Coverage's context for lines run outside any test (imports): they count for every test."""
DEFAULT_TEST_PATTERNS = (*testfiles.CONVENTIONS, "*/test_*.py", "*/conftest.py")  # the */ forms for coverage's omit
NEVER_SOURCE = ("*/site-packages/*", ".venv/*", "venv/*", "*/.venv/*", ".explore/*", ".git/*", "setup.py", "noxfile.py")


@dataclass
class Spectrum:
    """Which tests ran each line; the failing and passing ids come from the runner."""

    lines: dict[tuple[str, int], frozenset[str]]
    failing: frozenset[str]
    passing: frozenset[str]
    crash_lines: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    """Source lines named in failing tests' tracebacks: ties are broken in their favour."""
    asserted: frozenset[str] = field(default_factory=frozenset)
    """Literal values the failing assertions got (`assert [] == [[1]]`: `[]`), as AST dumps."""

    def covering(self, file: str, line: int) -> frozenset[str]:
        tests = self.lines.get((file, line), frozenset())
        if IMPORT_TIME in tests:
            return self.failing | self.passing
        return tests & (self.failing | self.passing)

    def counts(self, file: str, line: int) -> tuple[int, int, int, int]:
        tests = self.covering(file, line)
        ef = len(tests & self.failing)
        ep = len(tests & self.passing)
        return ef, ep, len(self.failing) - ef, len(self.passing) - ep


@dataclass(frozen=True, order=True)
class Suspect:
    """A line worth mutating; sorts most suspicious first, ties by file and line."""

    key: tuple[float | int | str, ...]
    """(-score, …, file, line): what orders a tie (rank: traceback lines first; ties.py: more)."""
    file: str
    line: int
    score: float


def rank(
    spectrum: Spectrum, formula: str = DEFAULT_FORMULA, exclude: Callable[[str], bool] = lambda f: False
) -> list[Suspect]:
    """Lines with a positive score, most suspicious first (ties: traceback lines, file, line)."""
    fn = FORMULAS[formula]
    out = []
    for file, line in spectrum.lines:
        if exclude(file):
            continue
        score = fn(*spectrum.counts(file, line))
        if score > 0:
            crash = (file, line) in spectrum.crash_lines
            out.append(Suspect((-round(score, 12), not crash, file, line), file, line, score))
    return sorted(out)


def position_of(suspects: list[Suspect], file: str, lines: Iterable[int]) -> float | None:
    """Where the first of `lines` ranks (1-based, ties counted at their average): the usual
    measure (EXAM-style) for comparing formulas against a known fix."""
    wanted = {(file, n) for n in lines}
    for _index, suspect in enumerate(suspects):
        if (suspect.file, suspect.line) in wanted:
            tied = [i for i, s in enumerate(suspects) if s.score == suspect.score]
            return (tied[0] + tied[-1]) / 2 + 1
    return None


NO_CONTRAST = 0.9
"""Without a passing test, the share of its score a line keeps when neither a traceback nor a
failing assertion's value points at it."""


def asserted_values(longreprs: Iterable[str]) -> frozenset[str]:
    """The literal values failing assertions compared (`E  assert 0 == 3`, `E  +  where [] = f(2)`),
    as AST dumps: the wrong value the code produced, often written as such in the source."""
    found: set[str] = set()
    for text in longreprs:
        for match in re.finditer(
            r"^E\s+(?:assert (.+?) (?:==|!=|<=|>=|<|>|is not|is|in|not in) |\+\s+where (.+?) = )", text, flags=re.M
        ):
            value = match.group(1) or match.group(2)
            try:
                node = parsing.parse_expression(value.strip())
            except (SyntaxError, ValueError, RecursionError):
                continue
            if _literal(node):
                found.add(ast.dump(node))
    return frozenset(found)


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) and _literal(v) for k, v in zip(node.keys, node.values))
    return isinstance(node, ast.Constant)


def literal_lines(file: str, tree: ast.AST, asserted: frozenset[str]) -> set[tuple[str, int]]:
    """The lines of `tree` that write one of the `asserted` values as a literal."""
    found: set[tuple[str, int]] = set()
    if not asserted:
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and _literal(node) and ast.dump(node) in asserted:
            found.update((file, n) for n in range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return found


def without_contrast(suspects: list[Suspect], spectrum: Spectrum, sources: dict[str, str]) -> list[Suspect]:
    """An order for a program no test passes on, where the spectrum ties every line the failing
    tests run: the lines a traceback names, or that write a value a failing assertion got
    (`return []` when the test got `[]`), keep their score; the others keep NO_CONTRAST of it."""
    if spectrum.passing or not spectrum.failing:
        return suspects
    valued: set[tuple[str, int]] = set()
    for file, text in sources.items():
        try:
            tree = parsing.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        valued |= literal_lines(file, tree, spectrum.asserted)
    out = []
    for s in suspects:
        favoured = (s.file, s.line) in valued or (s.file, s.line) in spectrum.crash_lines
        score = s.score if favoured else s.score * NO_CONTRAST
        out.append(Suspect((-round(score, 12), not favoured, s.file, s.line), s.file, s.line, score))
    return sorted(out)


# --- test files --------------------------------------------------------------------------------
def is_test_file(path: str, patterns: Iterable[str] = ()) -> bool:
    """Test files (and tooling) are never mutation targets."""
    return testfiles.is_test_file(path, (*DEFAULT_TEST_PATTERNS, *NEVER_SOURCE, *patterns))


def crash_lines(longreprs: Iterable[str]) -> frozenset[tuple[str, int]]:
    found = set()
    for text in longreprs:
        for match in re.finditer(r"^([\w./-]+\.py):(\d+):", text, flags=re.M):
            found.add((match.group(1), int(match.group(2))))
    return frozenset(found)


# --- collection (edge: one pytest run under coverage) ------------------------------------------
def plugin_dir(run_dir: Path) -> Path:
    """A copy of _worker.py and its helpers in a folder of their own, under names that shadow
    nothing when the folder is put on sys.path."""
    folder = run_dir / "plugin"
    folder.mkdir(parents=True, exist_ok=True)
    copies = {
        "_worker.py": f"{PLUGIN_NAME}.py",
        **{f"_{h}.py": f"_explore_mutate_{h}.py" for h in ("hotswap", "lines", "loading", "plugins", "serve", "warm")},
    }
    for source, name in copies.items():
        source_path, target = Path(__file__).with_name(source), folder / name
        # only when missing or different (a resume by a newer explore): rewriting per mutant would truncate files other lanes import
        if not target.exists() or target.read_bytes() != source_path.read_bytes():
            shutil.copyfile(source_path, target)
    return folder


def plugin_env(workdir: Path | None, run_dir: Path) -> dict[str, str]:
    """The plugin's folder on PYTHONPATH after workdir's own paths (workdir None: the plugin's
    alone, for the test runner to put after each shard's own worktree)."""
    paths = [isolation_env(workdir)["PYTHONPATH"]] if workdir else []
    return {"PYTHONPATH": ":".join([*paths, str(plugin_dir(run_dir))]), "PYTHONDONTWRITEBYTECODE": "1"}


def omit_patterns(test_patterns: Iterable[str] = ()) -> list[str]:
    return [f"*/{p}" if not p.startswith("*") else p for p in (*DEFAULT_TEST_PATTERNS, *NEVER_SOURCE, *test_patterns)]


def coverage_env(
    workdir: Path | None, run_dir: Path, mode: str, result_path: Path, test_patterns: Iterable[str] = ()
) -> dict[str, str]:
    """What a pytest run needs to load the plugin and record per-test lines into result_path
    (mode `coverage`: mutate's own run in workdir; `baseline`: riding along the loop's baseline,
    workdir None: the test runner puts each shard's own worktree first, the plugin after it)."""
    return {
        **plugin_env(workdir, run_dir),
        "EXPLORE_MUTATE_MODE": mode,
        "EXPLORE_MUTATE_RESULT": str(result_path),
        "EXPLORE_MUTATE_OMIT": json.dumps(omit_patterns(test_patterns)),
        "COVERAGE_CORE": "ctrace",
    }


@dataclass
class Collected:
    """What a per-test coverage run gave: the spectrum, its seconds, the user's pytest options
    it had to override, and whether the run measured anything at all."""

    spectrum: Spectrum
    seconds: float = 0.0
    overridden: list[str] = field(default_factory=list)
    measured: bool = True
    hung: list[str] = field(default_factory=list)
    """Tests that ignored the per-test limit: the run went on without them (no lines of theirs)."""


def shard_parts(result_path: Path) -> list[Path]:
    """The parts a sharded baseline wrote for result_path (`coverage-run.shard-K.json`)."""
    return sorted(result_path.parent.glob(f"{result_path.stem}.shard-*{result_path.suffix}"))


def _load(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def load_result(result_path: Path) -> dict[str, Any]:
    """The plugin's result: its file, or the parts of a sharded baseline merged into one — each
    line's tests the union of the parts' (import-time lines included). Unless every one of the n
    parts measured, nothing was (`status` missing): a spectrum without some tests' lines would
    point at the wrong places, so mutate measures afresh."""
    if result_path.exists():
        return _load(result_path)
    parts = [_load(path) for path in shard_parts(result_path)]
    of = {str(part.get("shard", "")).partition("/")[2] for part in parts}  # every part's n: one n, and n parts
    if of != {str(len(parts))} or any(part.get("status") != "ok" or "trace" not in part for part in parts):
        return {}
    files: dict[str, dict[str, set[str]]] = {}
    for part in parts:
        for file, info in part["trace"].get("files", {}).items():
            merged = files.setdefault(file, {})
            for number, contexts in (info.get("contexts") or {}).items():
                merged.setdefault(number, set()).update(contexts)
    return {
        "status": "ok",
        "overridden": sorted({o for part in parts for o in part.get("overridden") or []}),
        "trace": {"files": {f: {"contexts": {n: sorted(c) for n, c in lines.items()}} for f, lines in files.items()}},
    }


def read_result(
    result_path: Path, failing: Iterable[str], passing: Iterable[str], longreprs: Iterable[str] = ()
) -> Collected:
    """The plugin's result (a sharded baseline's parts merged) as a spectrum; `measured` False
    when it holds no per-test lines."""
    raw = load_result(result_path)
    report = raw.get("trace") if raw.get("status") == "ok" else None
    lines: dict[tuple[str, int], frozenset[str]] = {}
    for file, info in (report or {}).get("files", {}).items():
        rel = Path(file).as_posix()
        for number, contexts in (info.get("contexts") or {}).items():
            if int(number) >= 1:
                lines[(rel, int(number))] = frozenset(c.split("|")[0] for c in contexts)
    longreprs = list(longreprs)
    spectrum = Spectrum(
        lines, frozenset(failing), frozenset(passing), crash_lines(longreprs), asserted_values(longreprs)
    )
    return Collected(spectrum, overridden=list(raw.get("overridden") or []), measured=report is not None)


async def collect(
    python: str,
    workdir: Path,
    run_dir: Path,
    failing: Iterable[str],
    passing: Iterable[str],
    test_patterns: Iterable[str] = (),
    tracker: procs.ProcessTracker | None = None,
    longreprs: Iterable[str] = (),
    test_timeout: float | None = None,
    time_limit: float | None = None,
    hangs: Hangs | None = None,
    select: Iterable[str] = (),
    leave_out: Iterable[str] = (),
) -> Collected:
    """Run the suite — or the test files in `select` alone — once with per-test coverage in workdir
    (the plugin measures through coverage's API and reads the data back in the same process). A test that ignores the
    per-test limit ends that process (HARD_EXIT): the run goes on without it, as the loop's runs
    do. time_limit bounds the whole (every re-run included). hangs: the state the per-test limit
    starts from (lowered from the first test when the failing tests hung at the baseline). leave_out:
    tests of those files it does not run (focus.contrast), by exact id."""
    run_dir.mkdir(parents=True, exist_ok=True)
    result_path = run_dir / "coverage-run.json"
    env = coverage_env(workdir, run_dir, "coverage", result_path, test_patterns)
    hung: list[str] = []
    select, leave_out = list(select), list(leave_out)
    started = time.monotonic()
    with anyio.move_on_after(time_limit if time_limit else math.inf) as scope, homes.private_home() as home:
        env = {**home, **env}
        attempt = 0
        while True:  # each pass ends at a new stuck test or completes: at most one pass a test
            result_path.unlink(missing_ok=True)
            record = run_dir / f"coverage-{attempt}.record"
            cmd = [
                python,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
                "--tb=no",
                "-p",
                PLUGIN_NAME,
                *plugin_args(test_timeout, record, hangs),
                *(
                    [f"--explore-deselect={deselect_listing(record.with_suffix('.deselect'), [*leave_out, *hung])}"]
                    if hung or leave_out
                    else []
                ),
                *select,
            ]  # a looping test stops at its limit
            log = run_dir / ("coverage.log" if not attempt else f"coverage-rest-{attempt}.log")
            done = await procs.run(cmd, workdir, env=env, log_path=log, tracker=tracker)
            stuck = [i for i in hard_timeouts(record) if i not in hung]
            if done.exit_code != HARD_EXIT or not stuck:
                break
            hung += stuck
            hangs = carried_hangs(record, hangs or Hangs())
            attempt += 1
    if scope.cancelled_caught:
        raise RuntimeError(
            f"per-test coverage run exceeded its {time_limit:g}s limit (from the baseline's time); "
            f"its process tree was killed; see {run_dir / 'coverage.log'}"
        )
    found = read_result(result_path, failing, passing, longreprs)
    if not found.measured and done.exit_code not in (0, 1):
        raise RuntimeError(f"per-test coverage run failed (exit {done.exit_code}); see {log}")
    found.seconds = time.monotonic() - started
    found.hung = hung
    return found


def hard_timeouts(record: Path) -> list[str]:
    """The tests explore's plugin recorded as having ignored the per-test limit (their process ended)."""
    if not record.exists():
        return []
    found = []
    for line in record.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("kind") == "hard_timeout" and entry.get("nodeid"):
            found.append(str(entry["nodeid"]))
    return found


def interpreter(python: str | None) -> str:
    return python or sys.executable
