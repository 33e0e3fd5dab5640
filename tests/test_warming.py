"""The baseline with the generator warming up beside it (run/warming): a warm-up that outlasts the
baseline is waited for, and that wait is booked on the first proposal, so an iteration's phase
times account for it. A real run: real git repository, worktrees and pytest processes."""

from __future__ import annotations

import io
import time
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from conftest import assert_no_debris, make_repo, run_locked
from explore import generators
from explore.cli.live import Display, RunView
from explore.generators.base import WarmUpRequest
from explore.model.config import build_options
from explore.model.events import BaselineFinished, BaselineStarted, Event, IterationStarted, WarmUpWait
from explore.run import baseline
from test_core_fanout import CALC, FIX, FixedChanges

pytestmark = pytest.mark.anyio

WARM_S = 1.5
"""How long the warm-up goes on after the baseline has ended (its own work: what is measured)."""


class SlowWarmUp(FixedChanges):
    """A generator whose warm-up ends WARM_S after the baseline has (told by `baseline_over`)."""

    def __init__(self) -> None:
        super().__init__([FIX])
        self.baseline_over = anyio.Event()
        self.warmed = False

    async def warm_up(self, request: WarmUpRequest) -> None:
        await self.baseline_over.wait()
        await anyio.sleep(WARM_S)
        self.warmed = True


async def test_the_wait_for_a_warm_up_that_outlasts_the_baseline_is_booked_on_the_first_proposal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The iteration's phases (the JSON summary's `timing`) hold the WARM_S the run waited for the
    warm-up once the baseline had ended: on `propose`, the step that would have waited for it. It
    was in no phase: they added up to WARM_S less than the run took."""
    repo = make_repo(tmp_path / "repo", CALC)
    generator = SlowWarmUp()
    measure = baseline.measure

    async def measured(*args: object, **kwargs: object) -> baseline.Measured:
        found = await measure(*args, **kwargs)  # type: ignore[arg-type]
        generator.baseline_over.set()
        return found

    display, seen = Display("lines", "quiet"), []

    def listen(event: Event) -> None:  # each event with the live view's header once it is handled
        display.handle(event)
        seen.append((event, header(display.view)))

    monkeypatch.setattr(baseline, "measure", measured)
    monkeypatch.setattr(generators, "create", lambda name, options: generator)
    started = time.monotonic()
    run = await run_locked(repo, build_options(repo, {"agent": "mutate", "parallel": 1, "flaky_reruns": 0}), listen)
    took = time.monotonic() - started

    assert run.status == "succeeded" and generator.warmed and len(run.iterations) == 1, run
    timing = run.iterations[0].timing
    assert timing.propose >= WARM_S - 0.01, timing  # the proposal is at once: the rest is the wait
    assert timing.baseline > 0 and timing.total() <= took, (timing, took)
    # the live view and the log say what the timing books: the wait is the warm-up's, not the baseline's
    kinds = (BaselineStarted, WarmUpWait, BaselineFinished, IterationStarted)
    told = [(type(e).__name__, getattr(e, "waited_s", None), head) for e, head in seen if isinstance(e, kinds)]
    assert [(kind, waited is None) for kind, waited, _ in told] == [
        ("BaselineStarted", True),
        ("WarmUpWait", True),
        ("WarmUpWait", False),
        ("BaselineFinished", True),
        ("IterationStarted", True),
    ], told
    assert told[0][2] == "explore baseline" and told[1][2] == "explore fixed's warm-up (the first proposal's time)"
    assert told[3][2] == "explore baseline" and WARM_S - 0.01 <= (told[2][1] or 0) <= timing.propose, told
    assert_no_debris(repo)


def header(view: RunView) -> str:
    """The live view's first line, as a terminal shows it."""
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(view)
    return console.export_text().splitlines()[0].strip()
