"""Iteration 0 of `explore run --issue`: N test-writer samples, each in its own worktree, write
tests reproducing the bug report; each sample's new tests run on today's code. A test is kept
when it fails (not an error, not a pass, not an exception its writer did not predict) and its
failure agrees in substance with the one predicted: the values and names the prediction holds
appear in the failure, whatever the assertion style's wording (pytest's `assert 1 == 2`,
unittest's `1 != 2`). An assertion failure nobody predicted still counts, ranked below predicted
ones. When samples disagree, the largest group whose failures agree wins (majority, as Agentless
does) and the first sample of that group gives the kept tests. The pure decisions (`judge`, `vote`) are
separate from the worktrees and processes (`run_samples`)."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import git

from ..edges import procs
from ..edges.sandbox import Sandbox
from ..edges.testing import TestCommand, run_tests
from ..edges.worktrees import WorktreePool, run_setup
from ..generators.base import TestWriter, TestWriteRequest, WrittenTests
from ..model.errors import BudgetExhausted, Escalation, GeneratorFailed
from ..model.runstate import Reproduction, SampleAttempt
from ..model.testfiles import is_test_file
from ..model.testresults import TestRun
from ..model.usage import Usage

AMBIGUOUS_ACTION = (
    "Make the report say what the code should do (the input, the result expected, the result seen) "
    "and run again; or write the failing test yourself and run `explore run -- TEST_ID`."
)


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def predicted_for(written: WrittenTests, file: str) -> str:
    return written.predicted.get(file) or written.predicted.get("*", "")


STYLE_WORDS = frozenset(
    [
        "assert",
        "assertion",
        "assertionerror",
        "error",
        "expected",
        "expect",
        "got",
        "but",
        "was",
        "were",
        "is",
        "are",
        "be",
        "to",
        "equal",
        "equals",
        "not",
        "in",
        "and",
        "or",
        "the",
        "a",
        "an",
        "of",
        "should",
        "instead",
        "returned",
        "returns",
        "return",
        "value",
        "values",
        "fails",
        "failed",
        "failure",
        "with",
        "where",
        "than",
        "that",
        "it",
        "this",
    ]
)
"""The wording of assertion styles: never the substance of a prediction."""
TOKEN = re.compile(r"""'([^'\n]*)'|"([^"\n]*)"|(?<![\w.])(-?\d+(?:\.\d+)?)(?![\w])|([A-Za-z_]\w*)""")
EXCEPTION = re.compile(r"\s*(?:E\s+)?((?:\w+\.)*(\w*(?:Error|Exception|Exit|Interrupt)))\b")


def substance(prediction: str) -> list[str]:
    """The values and names a predicted failure holds: numbers, quoted strings, identifiers and
    exception types, without the words of an assertion style."""
    found: list[str] = []
    for single, double, number, word in TOKEN.findall(prediction):
        token = single or double or number or word
        if token and not (word and word.lower() in STYLE_WORDS) and token not in found:
            found.append(token)
    return found


def agrees(prediction: str, failure: str) -> bool:
    """The failure says what the prediction says: each of its values and names appears in it."""
    tokens = substance(prediction)
    if not tokens:
        return normalise(prediction) in normalise(failure)
    text = failure.lower()
    return all(
        re.search(
            rf"(?<![\w.]){re.escape(t.lower())}(?!\w)" if re.fullmatch(r"[\w.-]+", t) else re.escape(t.lower()), text
        )
        for t in tokens
    )


def raised(message: str) -> str | None:
    """The exception a failure raised other than an assertion (NameError, TypeError…), or None."""
    found = EXCEPTION.match(message)
    return found.group(2) if found and found.group(2) != "AssertionError" else None


def judge(attempt: SampleAttempt, written: WrittenTests, run: TestRun) -> None:
    """Which of the sample's tests reproduce the report: failed (not an error, not an exception
    nobody predicted) agreeing in substance with the predicted failure; without a prediction, an
    assertion failure, ranked below predicted ones. Fills reproducing, signature, unpredicted and why_not."""
    if not attempt.files:
        attempt.why_not = "wrote no test file" + (f" ({'; '.join(attempt.discarded)})" if attempt.discarded else "")
        return
    if run.collection_errors or (run.infra_error and not run.outcomes):
        attempt.why_not = f"its tests do not run: {run.infra_error or '; '.join(run.collection_errors)}"[:400]
        return
    whys: list[str] = []
    messages: dict[bool, set[str]] = {True: set(), False: set()}
    found: dict[bool, list[str]] = {True: [], False: []}  # predicted → reproducing tests
    for test_id, outcome in sorted(run.outcomes.items()):
        file = outcome.file or test_id.split("::", 1)[0]
        if file not in attempt.files:
            continue
        expected = predicted_for(written, file)
        failure = f"{outcome.message}\n{outcome.longrepr}"
        exception = raised(outcome.message)
        if outcome.outcome == "error":
            whys.append(f"{test_id} errors instead of failing: {outcome.message[:150]}")
        elif outcome.outcome != "failed":
            whys.append(f"{test_id} {outcome.outcome} on today's code")
        elif exception and not re.search(rf"\b{exception}\b", expected):
            whys.append(
                f"{test_id} errors with {outcome.message[:150]!r} instead of failing as predicted ({expected[:150]!r})"
            )
        elif expected and not agrees(expected, failure):
            missing = [t for t in substance(expected) if not agrees(t, failure)]
            whys.append(
                f"{test_id} fails with {outcome.message[:150]!r}, not the predicted {expected[:150]!r}"
                + (f" ({', '.join(missing[:5])} not in the failure)" if missing else "")
            )
        else:
            found[bool(expected)].append(test_id)
            messages[bool(expected)].add(normalise(outcome.message.splitlines()[0] if outcome.message else expected))
    predicted = bool(found[True])
    attempt.reproducing, attempt.unpredicted = found[predicted], not predicted and bool(found[False])
    attempt.signature = "\n".join(sorted(messages[predicted]))
    if not attempt.reproducing:
        attempt.why_not = "; ".join(whys) or "its test files hold no test"


def vote(attempts: list[SampleAttempt]) -> SampleAttempt | None:
    """The first sample of the largest group of reproducing samples whose failures agree; samples
    whose prediction came true rank above those that predicted nothing."""
    groups: dict[tuple[bool, str], list[SampleAttempt]] = {}
    for attempt in attempts:
        if attempt.reproducing:
            groups.setdefault((attempt.unpredicted, attempt.signature), []).append(attempt)
    if not groups:
        return None
    winners = max(
        groups.values(), key=lambda g: (not g[0].unpredicted, len(g))
    )  # max keeps the first of equals: sample order
    chosen = winners[0]
    for attempt in attempts:
        if attempt.reproducing and attempt is not chosen:
            attempt.why_not = (
                f"agrees with sample {chosen.sample}, whose tests were kept"
                if attempt in winners
                else f"its failures ({attempt.signature[:120]!r}) disagree with the majority "
                f"({len(winners)} of {len(attempts)} samples)"
            )
    return chosen


def escalation_reason(attempts: list[SampleAttempt]) -> str:
    tried = "; ".join(
        f"sample {a.sample} ({a.generator}) wrote {', '.join(a.files) or 'no test'}: {a.why_not}" for a in attempts
    )
    return f"no test written from the report reproduces it on today's code — {tried}"


@dataclass
class Samples:
    """What the samples share."""

    writer: TestWriter
    issue: str
    pool: WorktreePool
    commit: str
    test_command: TestCommand
    test_patterns: list[str]
    run_dir: Path
    timeout: float
    tracker: procs.ProcessTracker | None = None
    memory_limit: int | None = None
    setup: str | None = None
    """worktree_setup, run once in each fresh worktree."""
    sandbox: Sandbox | None = None
    progress: Callable[[str, str], None] = lambda _s, _t: None


async def run_samples(ctx: Samples, n: int) -> tuple[Reproduction, dict[str, Path]]:
    """Every sample in parallel; the vote; (the reproduction, each sample's worktree)."""
    attempts = [SampleAttempt(sample=letter, generator=ctx.writer.name) for letter in string.ascii_lowercase[:n]]
    paths: dict[str, Path] = {}
    stops: list[Exception] = []
    async with anyio.create_task_group() as group:
        for index, attempt in enumerate(attempts):
            group.start_soon(_sample, ctx, attempt, index, n, paths, stops)
    if stops:
        raise stops[0]  # a refused key, an unavailable API, a spent budget: the run stops
    chosen = vote(attempts)
    result = Reproduction(samples=attempts)
    if chosen is not None:
        result.chosen, result.kept = chosen.sample, sorted(chosen.reproducing)
        result.files = sorted({t.split("::", 1)[0] for t in chosen.reproducing})
    return result, paths


async def _sample(
    ctx: Samples, attempt: SampleAttempt, index: int, n: int, paths: dict[str, Path], stops: list[Exception]
) -> None:
    files_dir = ctx.run_dir / "reproduce" / f"sample-{attempt.sample}"
    files_dir.mkdir(parents=True, exist_ok=True)
    path, fresh = await anyio.to_thread.run_sync(ctx.pool.acquire, attempt.sample, ctx.commit)
    paths[attempt.sample] = path
    confine = ctx.sandbox.confine(path, files_dir) if ctx.sandbox else None
    if fresh and ctx.setup:
        setup = await run_setup(ctx.setup, path, files_dir / "setup.log", tracker=ctx.tracker, confine=confine)
        if not setup.ok:  # one sample lost, not the run: the other samples may still reproduce the report
            attempt.why_not = f"worktree_setup failed with exit {setup.exit_code}"
            return
    ctx.progress(attempt.sample, "writing tests")
    request = TestWriteRequest(
        issue=ctx.issue,
        workdir=path,
        sample=attempt.sample,
        index=index,
        of=n,
        files_dir=files_dir,
        test_patterns=ctx.test_patterns,
        test_command=ctx.test_command,
        tracker=ctx.tracker,
        confine=confine,
    )
    try:
        with anyio.fail_after(ctx.timeout):
            written = await ctx.writer.write_tests(request)
    except (Escalation, BudgetExhausted) as exc:
        attempt.usage = Usage.of(getattr(exc, "usage", None))
        stops.append(exc)
        return
    except GeneratorFailed as exc:  # its agent or command failed: this sample is lost
        attempt.usage = exc.usage
        attempt.why_not = f"the test writer failed: {exc}"[:400]
        ctx.progress(attempt.sample, attempt.why_not)
        return
    except Exception as exc:
        attempt.usage = Usage.of(getattr(exc, "usage", None))
        attempt.why_not = f"the test writer failed: {type(exc).__name__}: {exc}"[:400]
        ctx.progress(attempt.sample, attempt.why_not)
        return
    attempt.summary, attempt.usage, attempt.discarded = written.summary, Usage.of(written.usage), list(written.refused)
    captured = await anyio.to_thread.run_sync(ctx.pool.capture_patch, path, files_dir / "sample.diff")
    for file in captured.files:
        if is_test_file(file, ctx.test_patterns):
            attempt.files.append(file)
        else:
            await anyio.to_thread.run_sync(_drop, ctx.pool, path, file)
            attempt.discarded.append(f"{file}: not a test file, discarded")
    attempt.predicted = {f: predicted_for(written, f) for f in attempt.files}
    run = TestRun()
    if attempt.files:
        ctx.progress(attempt.sample, f"running {', '.join(attempt.files)} on today's code")
        with anyio.move_on_after(ctx.timeout):
            run = await run_tests(
                ctx.test_command,
                path,
                files_dir / "tests.log",
                select=attempt.files,
                tracker=ctx.tracker,
                memory_limit=ctx.memory_limit,
                confine=confine,
            )
    judge(attempt, written, run)
    ctx.progress(
        attempt.sample,
        f"reproduces: {', '.join(attempt.reproducing)}" if attempt.reproducing else f"not kept: {attempt.why_not}",
    )


def _drop(pool: WorktreePool, worktree: Path, file: str) -> None:
    """Undo a writer's change to a file that is not a test: restore it, or remove it if new."""
    try:
        pool.git_in(worktree, "checkout", "HEAD", "--", file)
    except git.GitCommandError:  # not in HEAD: new
        (worktree / file).unlink(missing_ok=True)


def keep_only(pool: WorktreePool, worktree: Path, changed: list[str], keep: list[str]) -> None:
    """Before committing the chosen sample: drop its test files that do not hold a kept test."""
    for file in changed:
        if file not in keep:
            _drop(pool, worktree, file)


def commit(pool: WorktreePool, worktree: Path, result: Reproduction, parent: str, issue: str, files_dir: Path) -> str:
    """The chosen sample's kept test files as one commit on parent: "reproduce: …"."""
    from ..edges import gitrepo

    chosen = next(a for a in result.samples if a.sample == result.chosen)
    keep_only(pool, worktree, chosen.files, result.files)
    captured = pool.capture_patch(worktree, files_dir / "reproduce.diff")
    title = next((line.strip("# ").strip() for line in issue.splitlines() if line.strip()), "the bug report")[:60]
    body = "\n".join(
        f"- {t}: fails with the predicted {chosen.predicted.get(t.split('::', 1)[0], '')[:120]!r}" for t in result.kept
    )
    message = f"reproduce: {title}\n\nTests written by sample {chosen.sample} ({chosen.generator}) that fail on today's code:\n{body}"
    return gitrepo.commit_patch(pool.repo, parent, captured.patch or b"", message, captured.tree)
