"""Debug reports by topic, for review: one markdown file per iteration in DIR/<topic>/NNN_<slug>.md
with the failing tests and their errors, each candidate's hypothesis, patch and result, why the
winner won, and the earlier attempts on the same tests — so no one retries a fix that already failed.

The topic comes from the failures (test_timeout, import_errors, assertion_<module>, …); NNN counts
on across runs in the same topic. With commit-reports the files go into the run branch's commit of
the iteration (amended, or a commit of their own when nothing was merged), never into the user's tree."""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from pathlib import Path

import git

from ..decide import scoring
from ..edges import gitrepo
from ..model.candidates import IterationRecord
from ..model.runstate import RunState
from ..model.testresults import TestOutcome
from . import reports


def topic(failing: list[TestOutcome]) -> str:
    """The kind of failure most of the failing tests share."""
    if not failing:
        return "no_failures"
    kinds = Counter(_kind(o) for o in failing)
    return kinds.most_common(1)[0][0]


def _kind(outcome: TestOutcome) -> str:
    text = f"{outcome.message}\n{outcome.longrepr}"
    if re.search(r"\bTimeout|timed out", text, re.IGNORECASE):
        return "test_timeout"
    if re.search(r"\b(ImportError|ModuleNotFoundError)\b", text):
        return "import_errors"
    module = _module(outcome)
    if (
        "AssertionError" in text
        or re.search(r"^\s*assert ", text, re.MULTILINE)
        or outcome.message.startswith("assert")
    ):
        return f"assertion_{module}"
    error = re.search(r"\b([A-Z]\w*(?:Error|Exception))\b", text)
    return f"{_slug(error.group(1))}_{module}" if error else f"failures_{module}"


def _module(outcome: TestOutcome) -> str:
    path = outcome.file or outcome.id.split("::", 1)[0]
    stem = Path(path).stem
    return _slug(stem.removeprefix("test_").removesuffix("_test") or stem)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:48] or "tests"


def next_number(names: list[str]) -> int:
    """One past the highest NNN_ among the file names already in the topic."""
    numbers = [int(m.group(1)) for m in (re.match(r"(\d{3,})_", n) for n in names) if m]
    return max(numbers, default=0) + 1


def existing(root: Path, repo: git.Repo, commit: str, folder: str) -> list[str]:
    """Report names in the topic folder: in the working tree and in the run branch's commit."""
    names = [p.name for p in (root / folder).glob("*.md")] if (root / folder).is_dir() else []
    try:
        listed = repo.git.ls_tree("--name-only", commit, f"{folder}/")
    except git.GitCommandError:
        listed = ""
    return names + [Path(n).name for n in listed.splitlines()]


def markdown(
    run: RunState,
    record: IterationRecord,
    failing: list[TestOutcome],
    topic_name: str,
    earlier_reports: list[str] | None = None,
) -> str:
    lines = [
        f"# {topic_name}: iteration {record.n} of run {run.run_id}",
        "",
        f"- **Strategy:** {record.strategy} — {record.strategy_reason}",
        "- **Result:** "
        + (f"merged candidate {record.winner} (`{record.commit[:10]}`)" if record.commit else "nothing merged")
        + f", pass rate now {record.pass_rate:.1f}%",
        "",
        "## Failing tests",
        "",
    ]
    for o in failing:
        lines += [f"### `{o.id}`", "", "```", (o.longrepr or o.message or o.outcome).strip()[-1500:], "```", ""]
    lines += ["## Candidates", ""]
    if not record.candidates:
        lines.append(f"None: {record.generator_note or 'the generator had no idea'}")
    for c in record.candidates:
        fate = c.reason or reports.why_not(record, c)
        said = not c.tested and "not tested" in fate  # its reason says so already: no "not tested: not tested:"
        lines += [
            f"### {c.id} — {c.status.value}, {fate if said else f'{reports.rate(c)}: {fate}'}",
            "",
            f"- Hypothesis: {(c.hypothesis or c.operator or '(none given)').strip()}",
            f"- Patch: {', '.join(c.files_changed) or 'no change'} ({c.diff_lines} changed line(s))"
            + (f", operator `{c.operator}`" if c.operator else ""),
            f"- Tests: {c.progress or '-'}"
            + (f"; newly failing: {', '.join(c.newly_failing)}" if c.newly_failing else "")
            + (f"; flaky (passed rerun alone and in order): {', '.join(c.rerun_passed)}" if c.rerun_passed else "")
            + (
                f"; order-dependent (passed alone, failed again after the tests before it): {', '.join(c.order_dependent)}"
                if c.order_dependent
                else ""
            )
            + (
                f"; skips on the baseline's tree too (the machine): {', '.join(c.machine_skips)}"
                if c.machine_skips
                else ""
            ),
            "",
        ]
    lines += ["## Why the winner won", "", _why_won(record), "", "## Earlier attempts on these tests", ""]
    lines += _earlier(run, record, earlier_reports or []) or ["None before this one."]
    return "\n".join(lines) + "\n"


def _why_won(record: IterationRecord) -> str:
    """The ranking rule on which the winner beat each other candidate that passed its tests — and
    each left untested (whole suite first), as it would have ranked passing every test."""
    winner = next((c for c in record.candidates if c.id == record.winner and record.commit), None)
    if winner is None:
        return "No candidate improved the pass rate; nothing was merged."
    others = [c for c in record.candidates if c.id != winner.id and c.status.value == "ok"]
    first = scoring.ranked_result(winner)
    beaten = [f"{c.id} on {scoring.deciding_rule(first, scoring.ranked_result(c))}" for c in others if c.tested]
    prospects = [(c.id, scoring.ranked_result(c, 100.0, 0)) for c in others if not c.tested]
    outranked = [f"{cid} on {scoring.deciding_rule(first, p)}" for cid, p in prospects if first.key() > p.key()]
    said = [f"it beat {', '.join(beaten)}"] if beaten else []
    if outranked:
        they, were = ("it", "was") if len(outranked) == 1 else ("they", "were")
        said.append(
            f"it outranks {', '.join(outranked)} even had {they} passed every test, so {they} {were} not tested"
        )
    unranked = [cid for cid, p in prospects if first.key() <= p.key()]  # validation did not reach them
    if unranked:
        said.append(f"{', '.join(unranked)} {'was' if len(unranked) == 1 else 'were'} not tested")
    order = ", then ".join(scoring.RULES)
    return f"Candidates are ranked by {order}. Candidate {winner.id} ({winner.pass_rate:.1f}%) came first" + (
        f"; {'; '.join(said)}." if said else "; no other candidate passed its tests."
    )


def _earlier(run: RunState, record: IterationRecord, earlier_reports: list[str]) -> list[str]:
    """Every candidate of this run's earlier iterations, and the topic's reports of earlier runs."""
    lines = []
    for old in run.iterations:
        if old.n >= record.n:
            continue
        for c in old.candidates:
            lines.append(
                f"- iteration {old.n}, {c.id} ({c.status.value}, {reports.rate(c)}): "
                f"{(c.hypothesis or c.operator or '').strip()[:160]} — {c.reason or reports.why_not(old, c)}"
            )
    lines += [f"- earlier report: [{name}]({name})" for name in sorted(set(earlier_reports))]
    return lines


def write(
    root: Path,
    repo: git.Repo,
    reports_dir: str,
    run: RunState,
    record: IterationRecord,
    failing: list[TestOutcome],
    commit: bool,
) -> tuple[Path, str | None]:
    """Write the iteration's report; with commit, put it on the run branch. (path, new tip or None)."""
    name = topic(failing)
    folder = f"{reports_dir.strip('/')}/{name}"
    names = existing(root, repo, run.current_commit, folder)
    number = next_number(names)
    first = failing[0].id.rsplit("::", 1)[-1] if failing else f"iteration_{record.n}"
    relative = f"{folder}/{number:03d}_{_slug(first)}.md"
    text = markdown(run, record, failing, name, names)
    if not commit:
        gitrepo.exclude_path(repo, f"/{reports_dir.strip('/')}/")  # local reports never make the tree dirty
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path, None
    return root / relative, _commit(repo, run, record, relative, text)


def _commit(repo: git.Repo, run: RunState, record: IterationRecord, relative: str, text: str) -> str:
    """The iteration's merge commit amended with the report, or a report commit of its own."""
    merged = record.commit == run.current_commit and record.commit is not None
    parent = repo.git.rev_parse(f"{run.current_commit}^") if merged else run.current_commit
    message = (
        repo.git.log("-1", "--format=%B", run.current_commit)
        if merged
        else f"explore: iteration {record.n} debug report (nothing merged)"
    )
    with tempfile.TemporaryDirectory(prefix="explore-report-") as folder:
        source = Path(folder) / "report.md"
        source.write_text(text, encoding="utf-8")
        blob = repo.git.hash_object("-w", str(source))

    def make(env: dict[str, str]) -> str:
        repo.git.read_tree(run.current_commit, env=env)
        repo.git.update_index("--add", "--cacheinfo", f"100644,{blob},{relative}", env=env)
        tree = repo.git.write_tree(env=env)
        return str(
            repo.git.commit_tree(tree, "-p", parent, "-m", message.strip(), env={**env, **gitrepo.identity_env(repo)})
        )

    return gitrepo._with_temp_index(repo, make)
