"""`.explore/history.jsonl` on disk: read (each line checked by decide/history.validated against
the runs recorded in `.explore/runs/` beside it, an ignored record warned about once) and appended to."""

from __future__ import annotations

import logging
from pathlib import Path

from ..decide.history import HistoryRecord, validated
from ..model.runstate import RunState
from ..model.tally import AgentTally

log = logging.getLogger("explore.history")  # the name users see in verbose logs, kept across the move
_warned: set[str] = set()


def load(path: Path) -> list[HistoryRecord]:
    """Records in order. A damaged line (a run killed mid-write) is skipped; a well-formed record
    no recorded run could have written (runs read from `runs/` beside the file) is ignored with a
    warning, once per line."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    records, ignored = validated(lines, lambda run_id: recorded_run(path.parent / "runs", run_id))
    for line, why in ignored:
        if line not in _warned:
            _warned.add(line)
            log.warning("%s: ignoring a record (%s)", path, why)
    return records


def recorded_run(runs: Path, run_id: str) -> RunState | None:
    """The saved state of run `run_id` under `runs`, None when there is none (or it is another run's)."""
    state = runs / run_id / "state.json"
    if "/" in run_id or run_id in ("", ".", "..") or not state.is_file():
        return None
    try:
        run = RunState.model_validate_json(state.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return run if run.run_id == run_id else None


def load_tallies(root: Path) -> list[dict[str, AgentTally]]:
    """Each iteration's per-agent tally in the repository's history (what `--deal auto` learns from)."""
    return [record.agents for record in load(root / ".explore" / "history.jsonl") if record.agents]


def append(path: Path, record: HistoryRecord) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(record.model_dump_json() + "\n")
        handle.flush()
