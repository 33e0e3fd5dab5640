"""The live view, seen as a person sees it: explore in a pseudo-terminal (pexpect), its output
rendered by a terminal emulator (pyte) into screenshots. Piped, the line log is unchanged."""

from __future__ import annotations

import io
import logging
import os
import re
import sys
from pathlib import Path

import pexpect
import pyte
from rich.console import Console

from conftest import assert_no_debris, git, run_cli
from explore.cli.demo import create_demo
from explore.cli.live import Display, Row, RunView, choose_mode
from explore.model.candidates import CandidateResult, CandidateStatus
from explore.model.events import CandidateEvent, Phase
from explore.model.usage import Usage

ROW = re.compile(r"^([abc])\s{2,}(\S.*?)\s{2,}")


def screenshots(args: list[str], cwd: Path, columns: int = 140, lines: int = 40) -> tuple[int, list[list[str]]]:
    """Run explore in a pty; a screenshot of the emulated screen after every frame of output.

    A chunk read from the pty may hold several frames, so it is fed in pieces, each ending where rich starts to erase the frame before it (a carriage return
    and erase-line): every frame the view drew is seen, not only each chunk's last."""
    environ = {k: v for k, v in os.environ.items() if k not in ("CI", "COLUMNS", "LINES")}  # the pty's size counts
    child = pexpect.spawn(
        sys.executable, ["-m", "explore", *args], cwd=str(cwd), env=environ, dimensions=(lines, columns), timeout=300
    )
    screen = pyte.Screen(columns, lines)
    stream = pyte.ByteStream(screen)
    shots: list[list[str]] = []
    while True:
        try:
            chunk = child.read_nonblocking(65536, timeout=300)
        except pexpect.EOF:
            break
        for piece in re.split(rb"(?=\r\x1b\[2K)", chunk):
            if piece:
                stream.feed(piece)
                shots.append([line.rstrip() for line in screen.display])
    child.close()
    return child.exitstatus, shots


def test_live_view_at_parallel_3_shows_a_row_per_candidate_updated_in_place(tmp_path: Path) -> None:
    target = create_demo(tmp_path / "demo")
    code, shots = screenshots(["run", "--agent", "mutate", "--parallel", "3", "--no-input"], target)
    assert code == 0, "\n".join(shots[-1])
    with_rows = [s for s in shots if any(ROW.match(line) for line in s)]
    assert with_rows, "\n".join(shots[-1])
    for shot in with_rows:  # one row per candidate: updated in place, never appended
        ids = [m.group(1) for m in (ROW.match(line) for line in shot) if m]
        assert len(ids) == len(set(ids)), "\n".join(shot)
    seen = {(m.group(1), m.group(2).split()[0]) for s in with_rows for m in (ROW.match(line) for line in s) if m}
    assert {"a", "b", "c"} <= {cid for cid, _ in seen}
    # a row updated in place: one candidate seen in two phases (every frame is seen, the one drawn
    # after the merge's note included)
    assert any(len({phase for cid, phase in seen if cid == one}) > 1 for one in "abc"), seen
    assert any(phase in ("generating", "affected", "starting", "full") for _, phase in seen), seen
    header = [s for s in with_rows if any(line.startswith("explore iteration 1") for line in s)]
    assert header and any("pass rate 28.6%" in line for line in header[0]), "\n".join(with_rows[0])
    final = shots[-1]
    assert not any(re.search(r"\[[abc]\] ", line) for s in shots for line in s), (
        "the line log leaked into the live view"
    )
    assert sum("succeeded: 7/7 passed" in line for line in final) == 1, "\n".join(final)
    assert any("iteration 1 candidates:" in line for line in final)
    assert_no_debris(target)


def test_piped_the_line_log_is_unchanged(tmp_path: Path) -> None:
    target = create_demo(tmp_path / "demo")
    code, _, err = run_cli(["run", "--agent", "mutate", "--parallel", "3"], cwd=target)
    assert code == 0, err
    assert "\x1b[" not in err
    lines = err.splitlines()
    end = next(
        i for i, line in enumerate(lines) if line.startswith("diff --git")
    )  # the change, as git shows it, closes the log
    assert all(re.match(r"^\s*\d+\.\ds ", line) for line in lines[:end]), err
    for expected in (
        "fan out: 3 candidate(s) a, b, c",
        "[a] starting",
        "[b] generating",
        "merged candidate a",
    ):
        assert expected in err, expected
    # c finished: tested (ok and its pass rate), or not tested (a validated one outranks it)
    assert re.search(r"\[c\] (ok \d|not tested: |same normalised patch as candidate \w, not tested)", err), err
    assert re.match(r"^\s*\d+\.\ds succeeded: 7/7 passed", lines[end - 4]) and re.match(
        r"^\s*\d+\.\ds report: ", lines[end - 3]
    )
    assert (
        re.match(r"^\s*\d+\.\ds changed 1 file \(\+2 -2\): pricing.py", lines[end - 2])
        and "explore undo" in lines[end - 1]
    )
    assert "\n".join(lines[end:]).strip() == git(target, "diff", "HEAD~1", "HEAD")


# ------------------------------------------------------------------------- pure parts


def test_mode_is_lines_under_json_ci_or_a_pipe() -> None:
    assert choose_mode(False, True, {}) == "live"
    assert choose_mode(True, True, {}) == "lines"
    assert choose_mode(False, False, {}) == "lines"
    assert choose_mode(False, True, {"CI": "true"}) == "lines"


def test_rows_follow_the_schedulers_typed_events() -> None:
    row = Row("a")
    row.apply(CandidateEvent("a", Phase.starting))
    row.apply(CandidateEvent("a", Phase.affected, "3"))
    assert (row.phase, row.tests) == ("affected tests", "affected (3)")
    done = CandidateResult(
        id="a",
        status=CandidateStatus.ok,
        pass_rate=80.0,
        progress="affected 3/3 → full 4/5",
        usage={"cost_usd": 0.0123},
    )
    row.apply(CandidateEvent("a", Phase.finished, result=done))
    assert (row.phase, row.pass_rate, row.tests, row.cost) == ("ok", 80.0, "affected 3/3 → full 4/5", 0.0123)
    late = CandidateResult(id="a", status=CandidateStatus.timeout, reason="exceeded --branch-timeout 5s")
    row.apply(CandidateEvent("a", Phase.finished, result=late))
    assert row.ended is not None and row.phase == "timeout: exceeded --branch-timeout 5s"
    view = RunView()
    view.read("iteration 2: strategy aggressive — stuck for 3 iterations")
    view.read("merged candidate b: 60.0% → 80.0% (abc)")
    assert (view.iteration, view.strategy, view.pass_rate) == (2, "aggressive", 80.0)
    display = Display("lines", "quiet")
    display.usage(
        2, Usage.model_validate({"cost_usd": 0.01, "calls": 3}), Usage.model_validate({"cost_usd": 0.025, "calls": 7})
    )
    assert display.view.spend == "$0.0250"


def test_an_untested_row_validated_after_all_starts_its_tests_afresh() -> None:
    """A candidate left untested (whole suite first) that validation runs after all: none of its
    tests had run, so its row reads "full" while its suite runs, not "not tested: … → full"; a
    candidate with affected tests behind it keeps them."""
    why = "not tested: candidate a outranks it even if it passed every test"
    row = Row("b")
    row.apply(CandidateEvent("b", Phase.starting))
    row.apply(CandidateEvent("b", Phase.not_tested, "candidate a outranks it even if it passed every test"))
    untested = CandidateResult(id="b", status=CandidateStatus.ok, tested=False, progress=why, reason=why)
    row.apply(CandidateEvent("b", Phase.finished, result=untested))
    assert (row.phase, row.tests, row.pass_rate) == ("not tested", why, None)
    row.apply(CandidateEvent("b", Phase.validating))
    assert (row.phase, row.tests) == ("full suite", "full")
    validated = CandidateResult(id="b", status=CandidateStatus.ok, pass_rate=100.0, progress="full 3/3")
    row.apply(CandidateEvent("b", Phase.finished, result=validated))
    assert (row.phase, row.tests, row.pass_rate) == ("ok", "full 3/3", 100.0)
    estimated = Row("c", phase="ok", tests="affected 3/3", pass_rate=100.0)
    estimated.apply(CandidateEvent("c", Phase.validating))
    assert estimated.tests == "affected 3/3 → full"


def test_library_logging_goes_through_the_display(capsys) -> None:
    display = Display("lines")
    with display:
        logging.getLogger("anthropic._base_client").info("Retrying request to /v1/messages in 0.5 seconds")
        logging.getLogger("some.tool").warning("disk almost full")
        logging.getLogger("some.tool").info("chatter")
    logging.getLogger("some.tool").warning("after the run")
    err = capsys.readouterr().err
    assert "INFO anthropic._base_client: Retrying request" in err and "WARNING some.tool: disk almost full" in err
    assert "chatter" not in err
    assert "WARNING some.tool: after the run" not in err  # the display's handler is gone once it stops


def test_quiet_prints_only_the_result_and_verbose_each_test_run(tmp_path: Path) -> None:
    from conftest import make_repo

    repo = make_repo(tmp_path / "repo", {"tests/test_ok.py": "def test_ok():\n    assert True\n"})
    code, _, err = run_cli(["run", "--quiet"], cwd=repo)
    assert code == 0, err
    assert [line.split()[1].rstrip(":") for line in err.splitlines()] == ["succeeded", "report"], err
    code, _, err = run_cli(["run"], cwd=repo)
    assert code == 0 and "baseline: 1/1 passed" in err and "explore.testing" not in err, err
    code, _, err = run_cli(["run", "--verbose"], cwd=repo)
    assert code == 0, err
    assert re.search(r"DEBUG explore\.testing: tests: .* -m pytest .*\(log .*baseline\.log\)", err), err


def test_in_an_80_column_terminal_only_the_phase_gives_way() -> None:
    """pytest-xdist's workers carry COLUMNS=80, and so do many terminals: the long phase of an
    untested candidate squeezed every column alike, dropping the candidate ids ("  ok  full 7/7")."""
    view = RunView(iteration=1, strategy="aggressive", why="the failures point at 3 distinct locations")
    view.rows = {cid: Row(cid, started=5.0, ended=5.0) for cid in "abc"}
    view.rows["a"].phase, view.rows["a"].tests, view.rows["a"].pass_rate = "ok", "full 7/7", 100.0
    for cid in "bc":
        view.rows[cid].phase = "not tested: candidate a outranks it even if it passed every test"
    console = Console(width=80, record=True, color_system=None, file=io.StringIO())
    console.print(view)
    lines = console.export_text().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert lines[-4:] == [
        "cand  phase                                     tests run  pass rate  time  cost",
        "a     ok                                        full 7/7      100.0%    0s      ",
        "b     not tested: candidate a outranks it eve…                          0s      ",
        "c     not tested: candidate a outranks it eve…                          0s      ",
    ], lines
