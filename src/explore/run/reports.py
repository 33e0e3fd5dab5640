"""The run's story: the JSON summary of DESIGN §2 and the markdown report."""

from __future__ import annotations

from pathlib import Path

from ..decide import environment, scoring, stop
from ..edges.gitrepo import run_ref
from ..model.candidates import CandidateResult, IterationRecord, PhaseTiming
from ..model.runstate import PAUSED, EscalationCategory, RunState
from ..model.summary import Summary
from ..model.tally import AgentTally, tally
from ..model.testresults import Counts, percent
from .applying import Change

EXIT_CODES = {"succeeded": 0, "partial": 0, "failed": 1, "escalated": 3, "interrupted": 130, "running": 1}


def summary(run: RunState, report_path: Path | None, change: Change | None = None) -> Summary:
    merged = run.merged_commit is not None
    branch = run.branch or (run_ref(run.run_id) if merged else None)  # an applied run keeps only its hidden ref
    return Summary(
        run_id=run.run_id,
        status=run.status,
        exit_code=EXIT_CODES[run.status],
        baseline=run.baseline,
        final=run.current,
        iterations=run.iterations,
        branch=branch if merged or run.status in PAUSED else None,
        merged_commit=run.merged_commit,
        applied=run.applied,
        escalation=run.escalation,
        report=str(report_path) if report_path else None,
        duration_s=run.duration_s,
        flaky=run.flaky,
        remaining_failures=run.current_failing,
        criticality=run.criticality,
        stop_reason=run.stop_reason,
        usage=run.usage,
        targets=run.targets,
        preexisting_failures=run.preexisting_failures,
        environment_failures=run.environment_failures,
        baseline_timeouts=run.baseline_timeouts,
        set_aside=run.set_aside,
        reproduction=run.reproduction,
        diff=change.diff if change else None,
        gave_up=run.gave_up,
        sandbox=run.sandbox,
    )


def duration_text(run: RunState) -> str:
    """The run's wall time, and how much of it the iterations' phases hold (explore's start and end
    among them): the rest (the steps between phases) is said, never left for the reader to find."""
    booked = sum(record.timing.total() for record in run.iterations)
    if not booked or booked > run.duration_s:
        return f"{run.duration_s:.1f}s"
    rest = run.duration_s - booked
    return f"{run.duration_s:.1f}s ({booked:.1f}s in the phases below; {rest:.1f}s in none: the steps between phases)"


def timing_text(timing: PhaseTiming) -> str:
    """`baseline 3.4s · coverage 1.2s · screening 4.0s · …`: the phases that took any time (a
    generator that does not split its proposal shows it whole)."""
    split = timing.coverage + timing.prepare + timing.screening > 0
    phases = [
        ("start", timing.start),
        ("baseline", timing.baseline),
        ("coverage", timing.coverage),
        ("preparation", timing.prepare),
        ("screening", timing.screening),
        (
            "other proposal" if split else "proposal",
            timing.propose - (timing.coverage + timing.prepare + timing.screening),
        ),
        ("fan-out", timing.fanout),
        ("validation", timing.validation - timing.confirmation),
        ("final confirmation", timing.confirmation),
        ("merge", timing.merge),
        ("end", timing.end),
    ]
    shown = [f"{name} {seconds:.1f}s" for name, seconds in phases if seconds >= 0.05]
    return " · ".join(shown) + f" (total {timing.total():.1f}s)"


def help_needed(run: RunState) -> list[str]:
    """The terminal and report block for an escalation."""
    e = run.escalation
    if e is None:
        return []
    return [
        f"HELP NEEDED ({e.category})",
        f"  what happened: {e.reason}",
        f"  why a person:  {_why(e.category)}",
        f"  suggested:     {e.suggested_action}",
        "  options:",
        *[f"    - {option}" for option in e.options],
    ]


def _why(category: EscalationCategory) -> str:
    return {
        EscalationCategory.infrastructure: "the tests cannot run, so no fix can be judged; the environment is outside explore's reach",
        EscalationCategory.external_service: "a service outside the repository is failing; changing code would only hide it",
        EscalationCategory.destructive: "the proposed fix would delete data or files; explore never applies that on its own",
        EscalationCategory.ambiguous_requirements: "what the code should do is undecided; a person has to choose",
    }.get(category, "explore cannot decide this safely on its own")


def unmeasured(run: RunState) -> str | None:
    """Why the run has no counts: its baseline did not run to its end (an escalation or a stop
    during it: the tests could not run, the suite overran its limit, a signal), else None."""
    if run.baselined or run.baseline.total or run.baseline_ids:
        return None
    if run.escalation is not None:
        return run.escalation.reason.split("\n")[0].split(" (log: ")[0]
    if run.status == "interrupted":
        return "interrupted before it ended"
    return "it did not run to its end"


def counts_text(run: RunState, counts: Counts) -> str:
    """`3/4 passed (75.0%)`, or why there are no counts (never `0/0 passed (0.0%)` for a baseline
    that did not run to its end: "baseline not measured: <why>")."""
    why = unmeasured(run)
    if why is not None:
        return f"baseline not measured: {why}"
    return f"{counts.passed}/{counts.total} passed ({percent(counts.pass_rate)})"


def result_line(run: RunState) -> str:
    """The run's last line: its status, the current counts, why it stopped."""
    return f"{run.status}: {counts_text(run, run.current)} — {run.stop_reason or ''}"


def markdown(run: RunState, change: Change | None = None) -> str:
    b, f = run.baseline, run.current
    lines = [
        f"# explore run {run.run_id}",
        "",
        f"- **Status:** {run.status}" + (f" — {run.stop_reason}" if run.stop_reason else ""),
        f"- **Repository:** `{run.repo}` (branch `{run.start_branch}`, started at `{run.start_commit[:10]}`"
        + (", uncommitted work snapshotted" if run.dirty else "")
        + ")",
        f"- **Baseline:** {counts_text(run, b)}",
        f"- **Final:** {counts_text(run, f)}",
        "- **Result:** "
        + (
            f"`{run.merged_commit[:10]}` on `{run.branch or run_ref(run.run_id)}`"
            + (", applied to your branch" if run.applied else ", not applied")
            if run.merged_commit
            else "nothing merged"
        ),
        f"- **Duration:** {duration_text(run)}",
    ]
    if not run.usage.empty:
        lines.append(f"- **Usage:** {run.usage.text()}")
    if run.hints:
        lines += ["", "## Guidance given", *[f"- {h}" for h in run.hints]]
    if run.escalation:
        lines += ["", "## Help needed", "", "```", *help_needed(run), "```"]
    lines += gave_up_lines(run)
    if change:
        lines += [
            "",
            "## Change",
            "",
            f"{change.headline()}; {change.command}",
            "",
            "```diff",
            change.diff.rstrip("\n"),
            "```",
        ]
    lines += fixed_lines(run) + reproduction_lines(run)
    for record in run.iterations:
        lines += [
            "",
            f"## Iteration {record.n} — {record.strategy}",
            "",
            f"Why this strategy: {record.strategy_reason}.",
        ]
        if record.generator_note:
            lines.append(f"Generator: {record.generator_note}")
        lines += [f"Fallback: {why}" for why in record.fallbacks]
        by = sorted({c.generator for c in record.candidates if c.generator})
        if record.fallbacks and by:
            lines.append(f"Candidates by: {', '.join(by)}")
        if record.candidates:
            lines += [
                "",
                "| candidate | status | pass rate | confidence | files | what it tried | why not | agent |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for c in record.candidates:
                tried = (c.hypothesis or c.operator or "").replace("|", "\\|").replace("\n", " ")[:160]
                why = (c.reason or why_not(record, c)).replace("|", "\\|")
                lines.append(
                    f"| {c.id} | {c.status.value} | {rate(c)} | {c.confidence:.2f} | {', '.join(c.files_changed)} | {tried} | {why[:200]} | {c.generator or ''} |"
                )
            lines += [
                f"Binary files in candidate {c.id}'s change: {', '.join(f'`{f}`' for f in c.binary_files)}"
                for c in record.candidates
                if c.binary_files
            ]
            lines += [
                f"Candidate {c.id} removes a directory, not destructive: {removal}"
                for c in record.candidates
                for removal in c.removals
            ]
        lines.append("")
        lines.append(
            f"After: {percent(record.pass_rate)}"
            + (f", merged {record.winner} as `{record.commit[:10]}`" if record.commit else ", nothing merged")
        )
        if not record.usage.empty:
            per_candidate = ", ".join(
                f"{c.id} ${c.usage.llm.cost_usd:.4f}" for c in record.candidates if not c.usage.llm.empty
            )
            lines.append(f"Usage: {record.usage.text()}" + (f" — candidates: {per_candidate}" if per_candidate else ""))
        if record.timing.total():
            lines.append(f"Time: {timing_text(record.timing)}")
    lines += agents_lines(tally(run.iterations))
    outside = [(r.n, c) for r in run.iterations for c in r.candidates if c.outside_writes]
    if outside:
        lines += [
            "",
            "## Writes outside the worktrees (put back; the candidate was rejected)",
            *[
                f"- iteration {n}, candidate {c.id}: {', '.join(f'`{p}`' for p in c.outside_writes)}"
                for n, c in outside
            ],
        ]
    if run.flaky:
        lines += ["", "## Flaky tests (not counted)", *[f"- `{t}`" for t in run.flaky]]
    lines += target_lines(run) + environment_lines(run) + timeout_lines(run)
    if run.set_aside:
        lines += ["", "## Set aside (no edit ever changed their outcome)", *[f"- `{t}`" for t in run.set_aside]]
    if run.current_failing:
        lines += [
            "",
            "## Remaining failures",
            *[f"- `{t}` ({run.criticality.get(t, 'high')} criticality)" for t in run.current_failing],
        ]
    return "\n".join(lines) + "\n"


def fixed_lines(run: RunState) -> list[str]:
    """What the merged result fixed and did not fix, against the baseline's failures; for a result
    left on the run's ref (a run below its gate), how to take it."""
    if not run.merged_commit or run.merged_commit == run.base_commit:
        return []
    failing = set(run.current_failing)
    fixed = [t for t in run.baseline_failing if t not in failing]
    still = [t for t in run.baseline_failing if t in failing]
    new = sorted(failing - set(run.baseline_failing))
    where = (
        "applied to your branch"
        if run.applied
        else f"not applied: your branch is as the run found it; take it with `explore apply {run.run_id}`"
    )
    lines = ["", f"## What the result fixes ({where})", ""]
    lines += [f"- fixed: `{t}`" for t in fixed] or ["- fixed: none of the baseline's failures"]
    lines += [f"- not fixed: `{t}`" for t in still] + [f"- failing since: `{t}`" for t in new]
    return lines


def agents_lines(agents: dict[str, AgentTally]) -> list[str]:
    """The per-agent tally (the JSON summary's `agents`), when candidates came from more than one."""
    if len(agents) < 2:
        return []
    lines = ["", "## Agents", "", "| agent | candidates | ok | wins | time | cost |", "|---|---|---|---|---|---|"]
    for name, t in agents.items():
        lines.append(f"| {name} | {t.candidates} | {t.ok} | {t.wins} | {t.time_s:.1f}s | ${t.cost_usd:.4f} |")
    return lines


def gave_up_lines(run: RunState) -> list[str]:
    """The search stopped with no repair in sight: why, what was tried, how to spend more."""
    g = run.gave_up
    if g is None:
        return []
    why = (
        f"no repair in sight after {g.search_s:.0f}s of search, over the search budget of {g.budget_s:.0f}s "
        f'(`search-budget = "{g.budget}"`; the suite takes {g.suite_s:.1f}s)'
        if g.why == "search_budget"
        else "the generator's search is complete on this commit and found no repair: asked again, it would find the same"
    )
    return [
        "",
        "## Gave up",
        "",
        f"Why: {why}.",
        "",
        f"What was tried: {stop.tried(g)}; every candidate and mutant search is under its iteration below.",
        "",
        "To spend more:",
        *[f"- {way}" for way in g.spend_more],
    ]


def reproduction_lines(run: RunState) -> list[str]:
    """Iteration 0 of `--issue`: what each test-writer sample tried and what was kept."""
    r = run.reproduction
    if r is None:
        return []
    kept = (
        f"kept {', '.join(f'`{t}`' for t in r.kept)} from sample {r.chosen}"
        + (f", committed as `{r.commit[:10]}`" if r.commit else "")
        if r.kept
        else "no test reproduces the report"
    )
    lines = [
        "",
        "## Iteration 0 — reproduce the report",
        "",
        f"Result: {kept}.",
        "",
        "| sample | generator | files | predicted failure | reproducing | why not kept |",
        "|---|---|---|---|---|---|",
    ]
    for a in r.samples:
        predicted = "; ".join(a.predicted.values()).replace("|", "\\|").replace("\n", " ")[:120]
        why = "; ".join([a.why_not or "kept", *a.discarded]).replace("|", "\\|").replace("\n", " ")[:300]
        lines.append(
            f"| {a.sample} | {a.generator} | {', '.join(a.files) or '-'} | {predicted} | {', '.join(a.reproducing) or '-'} | {why} |"
        )
    return lines


def target_lines(run: RunState) -> list[str]:
    """The targets and where each stands; the failures left alone because they are not targets."""
    if run.targets is None:
        return []
    failing = set(run.current_failing)
    lines = [
        "",
        f"## Targets ({len(run.targets)})",
        *[f"- `{t}` — {'failing' if t in failing else 'passes'}" for t in run.targets],
    ]
    if not run.targets:
        lines.append("- none: no failing test was chosen as a target")
    if run.preexisting_failures:
        lines += [
            "",
            "## Pre-existing failures (not targets, left alone)",
            *[f"- `{t}` — {'still failing' if t in failing else 'passes now'}" for t in run.preexisting_failures],
        ]
    return lines


def environment_lines(run: RunState) -> list[str]:
    """Failures no code edit can fix, left out of the targets, each with the line that shows why."""
    if not run.environment_failures:
        return []
    return [
        "",
        f"## Environment failures ({len(run.environment_failures)}: no code edit can fix them; left out of the targets)",
        *[f"- `{f.test}` ({f.kind}) — {environment.WHY[f.kind]}: `{f.evidence}`" for f in run.environment_failures],
    ]


def timeout_lines(run: RunState) -> list[str]:
    """The tests the per-test limit stopped at the baseline, each with where it was stuck and its
    stack; and those that overran it and passed rerun alone (slow, not failing)."""
    lines = []
    if run.baseline_slow:
        lines += [
            "",
            f"## Slow at the baseline, not failing ({len(run.baseline_slow)}: overran the per-test limit, passed rerun alone)",
            *[f"- `{t}`" for t in run.baseline_slow],
        ]
    if not run.baseline_timeouts:
        return lines
    lines += ["", f"## Hung at the baseline ({len(run.baseline_timeouts)}: outcome timeout)"]
    for hung in run.baseline_timeouts:
        stack = hung.stack.strip().splitlines()[-12:]
        lines += ["", f"- `{hung.test}` stuck at {hung.stuck_at} — {hung.message}", "", "  ```"]
        lines += [f"  {line}" for line in stack] + ["  ```"]
    return lines


def why_not(record: IterationRecord, c: CandidateResult) -> str:
    """A scored candidate's fate: merged, tied with the winner and lost on a rule, or no better."""
    winner = next((w for w in record.candidates if w.id == record.winner and record.commit), None)
    if winner is None or c.status.value != "ok":
        return "did not improve the pass rate"
    if c.id == winner.id:
        return "merged"
    if abs(c.pass_rate - winner.pass_rate) < 1e-9:
        return f"tied, lost on {scoring.deciding_rule(scoring.ranked_result(winner), scoring.ranked_result(c))}"
    return "lower pass rate than the winner"


def junit(run: RunState) -> str:
    """The final state as JUnit XML, for CI test reporting."""
    import xml.etree.ElementTree as ET

    failing, flaky = set(run.current_failing), set(run.flaky)
    ids = sorted(set(run.baseline_ids) | failing | flaky)
    suite = ET.Element(
        "testsuite",
        name=f"explore {run.run_id}",
        tests=str(len(ids)),
        failures=str(len(failing)),
        skipped=str(len(flaky - failing)),
    )
    for test_id in ids:
        classname, _, name = test_id.rpartition("::")
        case = ET.SubElement(suite, "testcase", classname=classname, name=name or test_id)
        if test_id in failing:
            ET.SubElement(case, "failure", message=run.failure_messages.get(test_id, "failing"))
        elif test_id in flaky:
            ET.SubElement(case, "skipped", message="flaky: outcome changed on the same code")
    return ET.tostring(suite, encoding="unicode")


def write(root: Path, run: RunState, change: Change | None = None) -> Path:
    from .state import atomic_write, run_dir

    path = run_dir(root, run.run_id) / "report.md"
    atomic_write(path, markdown(run, change))
    return path


def rate(c: CandidateResult) -> str:
    """c's pass rate as the report shows it: "not tested" when none of its tests ran."""
    return percent(c.pass_rate) if c.tested else "not tested"
