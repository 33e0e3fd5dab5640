"""The baseline's flaky rerun still going while the first iteration's candidates are tested (issue
40.4): their tests start at once, but nothing is judged against a yardstick that does not yet know
what the rerun found.

While it runs, a test it checks counts as the baseline found it (failing): a candidate's tests may
run it (its selection is then one test wider), and nothing that reads the yardstick — a score, a
prospect, a whole run stopped as outranked, validation — happens before the rerun's end
(FanOutConfig.judged waits for it). "Newly failing" is measured against the tests passing now, which
the rerun never touches (it reruns failing ones), so no candidate's rerun of its own is affected.
When the rerun ends, the candidates aimed only at a test it found flaky are withdrawn (decide/aims):
their scope is cancelled wherever they are — their test jobs killed — and their result says why."""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from ..decide import scoring
from ..model.candidates import CandidatePlan, CandidateResult, CandidateStatus


@dataclass(frozen=True)
class Judged:
    """What the fan-out judges by once the rerun has ended (the loop's state after it)."""

    yardstick: scoring.Yardstick
    current_passing: frozenset[str]
    current_rate: float
    protected: frozenset[str]


class Pending:
    """The rerun's end as the fan-out awaits it: what to judge by from then on (None: nothing found
    flaky, judge as the fan-out started) and the candidates withdrawn (by id, with the reason)."""

    def __init__(self) -> None:
        self.ended = anyio.Event()
        self.judged: Judged | None = None
        self.withdrawn: dict[str, str] = {}

    def end(self, judged: Judged | None, withdrawn: dict[str, str]) -> None:
        """The rerun is over: set before anyone waiting is woken."""
        self.judged, self.withdrawn = judged, dict(withdrawn)
        self.ended.set()


def withdrawn_result(plan: CandidatePlan, reason: str) -> CandidateResult:
    """A candidate withdrawn as aimed only at tests found flaky: rejected, with the reason, no score,
    none of its tests counted (some may have run: they were cancelled)."""
    return CandidateResult(
        id=plan.id,
        status=CandidateStatus.rejected,
        reason=reason,
        hypothesis=plan.hypothesis,
        confidence=plan.confidence,
        operator=plan.operator,
        location=plan.location,
        generator=plan.generator,
        tested=False,
        validated=False,
    )
