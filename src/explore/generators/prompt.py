"""The task text an external or LLM agent gets: failures, strategy guidance, what was tried."""

from __future__ import annotations

from .base import ProposalRequest


def head_tail(text: str, limit: int) -> str:
    """Keep the start and the end of a long text and say what was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit} characters cut …]\n{text[-half:]}"


def build_prompt(request: ProposalRequest, hypothesis: str | None = None, per_failure: int = 3000) -> str:
    lines = [
        f"# Repair the failing tests (iteration {request.iteration}, strategy {request.strategy.name})",
        "",
        request.strategy.guidance or "Fix the code so the failing tests pass.",
        "",
    ]
    if not request.allow_test_edits:
        lines += ["Do not edit, delete or skip tests: a candidate that touches test files is rejected.", ""]
    if hypothesis:
        lines += ["## Hypothesis to pursue", hypothesis, ""]
    if request.hint:
        lines += ["## Guidance from a person", request.hint, ""]
    lines.append(f"## Failing tests ({len(request.failing)})")
    for outcome in request.failing[:30]:
        lines += ["", f"### {outcome.id}", head_tail(outcome.longrepr or outcome.message or "(no output)", per_failure)]
    if len(request.failing) > 30:
        lines.append(f"\n… and {len(request.failing) - 30} more failing tests not shown.")
    tried = [(it, c) for it in request.history for c in it.candidates]
    if tried:
        lines += ["", "## Already tried — do not propose these again"]
        for iteration, candidate in tried:
            ended = (
                "merged"
                if iteration.winner == candidate.id and iteration.commit
                else (candidate.reason or candidate.status.value)
            )
            what = candidate.hypothesis or candidate.operator or "(no description)"
            lines.append(
                f"- iteration {iteration.n} ({iteration.strategy}) candidate {candidate.id}: {what} "
                f"[{', '.join(candidate.files_changed) or 'no files'}] → {f'pass rate {candidate.pass_rate:.1f}%' if candidate.tested else 'not tested'}, {ended}"
            )
    return "\n".join(lines) + "\n"
