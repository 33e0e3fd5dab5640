"""Progress on stderr: a rich Live view in a terminal (a run header and one row per candidate,
updated in place), or the line-oriented log when stderr is not a terminal, under CI=true or with
--json. Both are fed by the run's typed events (`Display.handle`, subscribed by the CLI), so the
runner knows nothing about how progress is shown. Library logging goes through it too."""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console, Group, JustifyMethod
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ..model.candidates import CandidateStatus
from ..model.events import (
    BaselineFinished,
    BaselineStarted,
    CandidateEvent,
    Event,
    FanOutStarted,
    IterationStarted,
    Merged,
    Note,
    Phase,
    Step,
    TestsProgress,
    UsageSpent,
    WarmUpWait,
    describe,
    note_text,
)
from ..model.testresults import percent
from ..model.usage import Usage

if TYPE_CHECKING:
    from ..run.applying import Change

Mode = Literal["live", "lines"]
PROGRESS_EVERY_S = 5.0
"""In the line log, a running job's progress is printed at most this often."""
PROGRESS_SHOWN_S = 6.0
"""In the live view, a job's progress is shown while it is fresher than this."""
PLAIN_DIFF_LINES = 400
"""Past this, a diff in a log (not a terminal) is shortened too; the full one is on disk."""
Verbosity = Literal["quiet", "normal", "verbose"]


def make_console(**kwargs: Any) -> Console:
    """A rich console that honours NO_COLOR fully (no bold or dim either, https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        kwargs["color_system"] = None
    return Console(**kwargs)


def choose_mode(as_json: bool, stderr_is_terminal: bool, env: dict[str, str] | None = None) -> Mode:
    """The live view only where a person watches a terminal; everything else gets the line log."""
    env = dict(os.environ) if env is None else env
    if as_json or not stderr_is_terminal or env.get("CI", "").lower() in ("true", "1"):
        return "lines"
    return "live"


@dataclass
class Row:
    """One candidate as the live view shows it."""

    cid: str
    phase: str = "waiting"
    tests: str = ""
    pass_rate: float | None = None
    cost: float | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None

    def apply(self, event: CandidateEvent) -> None:
        """A candidate's typed progress event, into the row."""
        now = time.monotonic()
        if event.phase == Phase.starting:
            self.started, self.phase = now, "starting"
        elif event.phase == Phase.finished and event.result is not None:
            result = event.result
            self.cost, self.ended = result.usage.llm.cost_usd or self.cost, now
            if result.status == CandidateStatus.ok and not result.tested:
                self.phase, self.pass_rate, self.tests = "not tested", None, result.progress or self.tests
            elif result.status == CandidateStatus.ok:
                self.phase, self.pass_rate, self.tests = "ok", result.pass_rate, result.progress or self.tests
            else:
                self.phase = f"{result.status.value}: {result.reason or ''}"
        elif event.phase == Phase.affected:
            self.phase, self.tests = "affected tests", f"affected ({event.detail})"
        elif event.phase in (Phase.full, Phase.validating):
            before = "" if self.phase == "not tested" else self.tests  # none of its tests ran: afresh
            self.phase, self.tests = "full suite", (before + " → full").lstrip(" →")
        else:
            self.phase = describe(event)

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started


@dataclass
class RunView:
    """What the header shows: gathered from the phase and note lines."""

    started: float = field(default_factory=time.monotonic)
    iteration: int = 0
    strategy: str = ""
    why: str = ""
    pass_rate: float | None = None
    spend: str = ""
    warming: str = ""
    """The generator whose warm-up the run waits for once the baseline's run has ended."""
    rows: dict[str, Row] = field(default_factory=dict)
    progress: dict[str, tuple[str, float]] = field(default_factory=dict)
    """The running test jobs' progress (`baseline: 1,234/2,521 tests run`) by job, and when it came."""

    def read(self, text: str) -> None:
        head = re.match(r"iteration (\d+): strategy (\S+) — (.*)", text)
        rate = re.search(r"(?:baseline: \d+/\d+ passed \(|merged candidate \w+: [\d.]+% → )(\d+\.\d)%", text)
        if head:
            self.iteration, self.strategy, self.why = int(head.group(1)), head.group(2), head.group(3)
            self.rows = {}
        if rate:
            self.pass_rate = float(rate.group(1))

    def __rich__(self) -> Group:
        elapsed = time.monotonic() - self.started
        head = Text.assemble(
            ("explore ", "bold"),
            f"iteration {self.iteration}"
            if self.iteration
            else (f"{self.warming}'s warm-up (the first proposal's time)" if self.warming else "baseline"),
            (f"  strategy {self.strategy}", "cyan") if self.strategy else "",
            f" — {self.why}" if self.why else "",
        )
        facts = Text(
            f"pass rate {'-' if self.pass_rate is None else percent(self.pass_rate)}"
            f"  ·  {elapsed:.0f}s elapsed"
            + (f"  ·  spent {self.spend}" if self.spend else "")
            + "".join(
                f"  ·  {text}"
                for text, when in list(self.progress.values())
                if time.monotonic() - when < PROGRESS_SHOWN_S
            ),
            style="dim",
        )
        table = Table(box=None, pad_edge=False, show_edge=False)
        justify: JustifyMethod
        for name, justify in (
            ("cand", "left"),
            ("phase", "left"),
            ("tests run", "left"),
            ("pass rate", "right"),
            ("time", "right"),
            ("cost", "right"),
        ):
            # In a narrow terminal only the phase gives way (its cells end in an ellipsis, never wrap):
            # rich shrinks every unwrappable column alike, and an 80-column terminal lost the candidate
            # ids and read "100.…" for the pass rate.
            table.add_column(name, justify=justify, no_wrap=name != "phase", overflow="ellipsis")
        for row in list(self.rows.values()):  # the refresh thread reads while the run writes
            table.add_row(
                row.cid,
                Text(row.phase[:60], no_wrap=True, overflow="ellipsis"),
                row.tests,
                "" if row.pass_rate is None else percent(row.pass_rate),
                f"{row.seconds:.0f}s",
                "" if row.cost is None else f"${row.cost:.4f}",
            )
        return Group(head, facts, table) if self.rows else Group(head, facts)

    def summary_line(self) -> str | None:
        """The iteration's rows in one line, kept in the scrollback once the iteration is over."""
        if not self.rows:
            return None
        rows = ", ".join(
            f"{r.cid} {r.phase.split(':')[0]}" + (f" {percent(r.pass_rate)}" if r.pass_rate is not None else "")
            for r in list(self.rows.values())
        )
        return f"  iteration {self.iteration} candidates: {rows}"


class Display:
    """Progress on stderr in one of two modes; `start()`/`stop()` bracket a run."""

    def __init__(self, mode: Mode = "lines", verbosity: Verbosity = "normal") -> None:
        self.console = make_console(stderr=True, highlight=False, soft_wrap=mode == "lines")
        self.mode, self.verbosity = mode, verbosity
        self.quiet = verbosity == "quiet"
        self.started = time.monotonic()
        self.view = RunView()
        self._live: Live | None = None
        self._handler: _DisplayHandler | None = None
        self._levels: dict[str, int] = {}
        self._progress_printed: dict[str, float] = {}
        self._said: dict[str, str] = {}
        """Each candidate's last line: the same words are not printed twice in a row."""

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Route library logging here and, in live mode, start the in-place view."""
        if self._handler is None:
            self._handler = _DisplayHandler(self)
            root = logging.getLogger()
            root.addHandler(self._handler)
            logging.captureWarnings(True)
            verbose = self.verbosity == "verbose"
            for name, level in (
                ("explore", logging.DEBUG if verbose else logging.INFO),
                ("anthropic", logging.INFO),
                ("httpx", logging.INFO if verbose else logging.WARNING),
            ):
                logger = logging.getLogger(name)
                self._levels[name] = logger.level
                logger.setLevel(level)
        if self.mode == "live" and not self.quiet and self._live is None:
            self._live = Live(
                self.view,
                console=self.console,
                refresh_per_second=4,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            self._flush_rows()
        if self._handler is not None:
            logging.getLogger().removeHandler(self._handler)
            logging.captureWarnings(False)
            for name, level in self._levels.items():
                logging.getLogger(name).setLevel(level)
            self._handler = None

    def __enter__(self) -> Display:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ the run's events

    def handle(self, event: Event) -> None:
        """A run event (subscribed by the CLI): the header and rows of the live view, a line of the log."""
        if isinstance(event, CandidateEvent):
            self.candidate(event)
        elif isinstance(event, FanOutStarted):
            self.candidates(list(event.candidates))
        elif isinstance(event, UsageSpent):
            self.usage(event.n, event.iteration, event.run)
        elif isinstance(event, (IterationStarted, BaselineStarted, BaselineFinished, WarmUpWait, Step)):
            if isinstance(event, WarmUpWait):
                self.view.warming = event.generator if event.waited_s is None else ""
            elif isinstance(event, IterationStarted):
                self._flush_rows()
                self.view.iteration, self.view.strategy, self.view.why = event.n, event.strategy, event.reason
            elif isinstance(event, BaselineFinished):
                self.view.pass_rate = round(event.counts.pass_rate, 1)
            self._print(f"[bold]{_escape(note_text(event) or '')}[/bold]")
        elif isinstance(event, TestsProgress):
            self.tests_progress(event)
        elif isinstance(event, (Note, Merged)):
            if isinstance(event, Merged):
                self.view.pass_rate = round(event.after, 1)
            self._print(_escape(note_text(event) or ""))

    __call__ = handle
    """A Display is a subscriber of the run's events (model.events.Subscriber)."""

    # ------------------------------------------------------------ lines

    def _print(self, text: str, style: str = "") -> None:
        if not self.quiet:
            elapsed = time.monotonic() - self.started
            self.console.print(f"[dim]{elapsed:7.1f}s[/dim] {text}", style=style, markup=True)

    def phase(self, text: str) -> None:
        if text.startswith("iteration "):
            self._flush_rows()
        self.view.read(text)
        self._print(f"[bold]{_escape(text)}[/bold]")

    def note(self, text: str) -> None:
        self.view.read(text)
        self._print(_escape(text))

    def usage(self, n: int, iteration: Usage, run: Usage) -> None:
        """What iteration n and the whole run spent; the header shows the run's dollars."""
        if not run.llm.empty:
            self.view.spend = f"${run.llm.cost_usd:.4f}"
        self.note(f"usage: iteration {n} {iteration.text()}; run {run.text()}")

    def tests_progress(self, event: TestsProgress) -> None:
        """A running job's progress: in the live view's header; in the line log every few seconds."""
        text, now = note_text(event) or "", time.monotonic()
        printed = self._progress_printed.get(event.label)
        self.view.progress[event.label] = (text, now)
        if self.mode == "lines" and (printed is None or now - printed >= PROGRESS_EVERY_S):
            self._progress_printed[event.label] = now
            self._print(f"  {_escape(text)}")

    def candidates(self, ids: list[str]) -> None:
        self.view.rows = {cid: Row(cid) for cid in ids}
        self._said = {}
        if self.mode == "lines":
            self._print(f"  fan out: {len(ids)} candidate(s) {', '.join(ids)}")

    def candidate(self, event: CandidateEvent) -> None:
        cid = event.candidate
        self.view.rows.setdefault(cid, Row(cid)).apply(event)
        if self.mode == "lines" or self.verbosity == "verbose":
            text = describe(event)
            if self._said.get(cid) == text:  # "not tested: …", then finished with the same words
                return
            self._said[cid] = text
            self._print(f"  [{cid}] {_escape(text)}".replace(f"[{cid}]", f"\\[{cid}]", 1))

    def result(self, text: str) -> None:
        """The run's outcome: printed once, whatever the verbosity (timestamped like the rest of the line log)."""
        if self.mode == "lines":
            self.console.print(Text(f"{time.monotonic() - self.started:7.1f}s ", style="dim") + Text(text))
        else:
            self.console.print(
                text, markup=False, highlight=False, soft_wrap=True
            )  # one line, wrapped by the terminal only

    def change(self, change: Change) -> None:
        """The end of a run: what it changed (files and lines), the one command that undoes it (none
        for a project removed as explore ends), then the patch itself — coloured in a terminal,
        shortened past a screen with the path of the full diff."""
        self.result(change.headline())
        if change.command:
            self.result(change.command)
        lines = change.diff.rstrip("\n").splitlines()
        limit = max(10, self.console.size.height - 6) if self.mode == "live" else PLAIN_DIFF_LINES
        for line in lines[:limit]:
            self.console.print(Text(line, style=_diff_style(line)), soft_wrap=True)
        if len(lines) > limit:
            self.result(f"... {len(lines) - limit} more lines; the full diff: {change.path}")

    def log(self, text: str) -> None:
        """A line from a library's logging or a warning: above the live view, or in the log."""
        if self.quiet and not text.startswith(("WARNING", "ERROR", "CRITICAL")):
            return
        elapsed = time.monotonic() - self.started
        self.console.print(Text(f"{elapsed:7.1f}s ", style="dim") + Text(text))

    def _flush_rows(self) -> None:
        line = self.view.summary_line() if self.mode == "live" else None
        if line:
            self._print(_escape(line))
        self.view.rows = {}


class _DisplayHandler(logging.Handler):
    def __init__(self, display: Display) -> None:
        super().__init__(logging.DEBUG)
        self.display = display

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.display.log(f"{record.levelname} {record.name}: {record.getMessage()}")
        except Exception:  # a display failure must never take the run down
            self.handleError(record)


def _diff_style(line: str) -> str:
    if line.startswith(("+++", "---", "diff --git", "index ")):
        return "bold"
    return {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")


def _escape(text: str) -> str:
    return text.replace("[", "\\[")
