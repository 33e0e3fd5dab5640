"""Issue 4's cost figure: what one `--agent anthropic` iteration costs on the benchmark corpus,
measured with the scripted transport's token counts (no live API call is made).

How. `explore bench --agent anthropic` runs every case as a user would (a real explore process,
the real SDK) against `ScriptedAPI` served on 127.0.0.1 through ANTHROPIC_BASE_URL. Token
counts are the scripted server's: ~4 characters a token of each real request (explore's own
repair context, tool schemas, the files the tools really read), with `cache_control` blocks
billed as cache writes the first time and cache reads after, as the API bills them. Dollars
come from explore's built-in price table for the default models.

The scripted agent. It plays a short, competent conversation whose *content* comes from the
case's reference fix (`fix.patch`) — so it measures what the conversation costs, not how well
Claude repairs; the repair rate printed is the oracle's, not a model's:
  debugger  list_files "." → read_file <module> → search <function> → submit_diagnosis
            (exploratory: the reference diagnosis plus up to N-1 alternatives, made by flipping
            one operator or constant of the buggy line);
  coder     read_file <file> → replace_in_file per change of the diagnosis it was given →
            finish (confidence 0.8, or 0.2 when an edit was refused).
Real models write reasoning text and usually read more (tests, callers): expect real costs to
be higher, mainly in output tokens.

Run: /work/venv/bin/python benchmarks/claude_cost.py [--strategy conservative ...] [--case NAME ...]
     [--parallel 3] [--out benchmarks/results/claude-cost.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explore.generators.anthropic.cost import DEFAULT_PRICES, USAGE_KEYS, cost_of
from explore.generators.anthropic.scripted import ScriptedAPI, Step, serve

CASES = Path(__file__).resolve().parent / "cases"
ALTERNATIVES = [
    ("<=", "<"),
    ("<", "<="),
    (">=", ">"),
    (">", ">="),
    ("==", "!="),
    ("!=", "=="),
    (" and ", " or "),
    (" or ", " and "),
    (" + ", " - "),
    (" - ", " + "),
    (" * ", " // "),
    ("True", "False"),
    ("False", "True"),
]


@dataclass
class Change:
    file: str
    line: int
    current: str
    should_be: str


@dataclass
class Case:
    name: str
    module: str
    function: str
    changes: list[Change]
    source: str


@dataclass
class Tally:
    """Tokens and dollars per case and role, kept by the server as it answers."""

    by_case: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def add(self, case: str, role: str, model: str, usage: dict[str, int]) -> None:
        row = self.by_case.setdefault(case, {}).setdefault(
            role, {k: 0 for k in (*USAGE_KEYS, "cost_usd", "uncached_usd", "calls")}
        )
        for key in USAGE_KEYS:
            row[key] += usage[key]
        row["cost_usd"] += cost_of(model, usage, DEFAULT_PRICES)
        # the same prompts with no prompt caching: every input token at the input price
        row["uncached_usd"] += cost_of(
            model,
            {
                "input_tokens": sum(usage[k] for k in USAGE_KEYS if k != "output_tokens"),
                "output_tokens": usage["output_tokens"],
            },
            DEFAULT_PRICES,
        )
        row["calls"] += 1


def load_case(folder: Path) -> Case:
    """The reference fix as diagnosis changes; each `current` is widened with the lines above it
    until it occurs exactly once in the buggy file (replace_in_file needs a unique anchor)."""
    patch = (folder / "fix.patch").read_text(encoding="utf-8").splitlines()
    module = next(line[6:] for line in patch if line.startswith("+++ b/"))
    source = (folder / "project" / module).read_text(encoding="utf-8")
    changes: list[Change] = []
    before, removed, added, old_line, first = [], [], [], 0, 0

    def flush() -> None:
        nonlocal removed, added
        if removed or added:
            context = 0 if removed and added else 1  # a pure deletion or insertion needs an anchor line
            while True:
                above = before[len(before) - context :] if context else []
                current = "\n".join(above + removed)
                if source.count(current) == 1 or context >= len(before):
                    break
                context += 1
            changes.append(Change(module, first, current, "\n".join(above + added)))
        removed, added = [], []

    for line in patch:
        if line.startswith("@@"):
            flush()
            old_line = int(re.match(r"@@ -(\d+)", line).group(1))  # type: ignore[union-attr]
            before = []
        elif line.startswith(("---", "+++")):
            continue
        elif line.startswith("-"):
            if not removed and not added:
                first = old_line
            removed.append(line[1:])
            old_line += 1
        elif line.startswith("+"):
            if not removed and not added:
                first = old_line
            added.append(line[1:])
        else:
            flush()
            text = line[1:] if line.startswith(" ") else line
            before.append(text)
            old_line += 1
    flush()
    head = source.splitlines()[: changes[0].line]  # the buggy function: the nearest def above the first change
    function = next((h.split("def ", 1)[1].split("(")[0] for h in reversed(head) if h.lstrip().startswith("def ")), "")
    return Case(folder.name, module, function, changes, source)


def diagnosis(case: Case, changes: list[Change], description: str, level: str) -> dict[str, Any]:
    first = changes[0]
    return {
        "failure_classification": "test_failure",
        "root_cause": f"{case.function}() in {case.module} computes the wrong result: {description}",
        "root_cause_location": {"file": first.file, "line": first.line, "context": first.current.strip()[:200]},
        "fix": {"description": description, "changes": [vars(c) for c in changes]},
        "confidence": {"level": level, "reason": "the failing assertions point at this line"},
    }


def alternatives(case: Case, wanted: int) -> list[dict[str, Any]]:
    """Other plausible one-operator edits of the buggy text, different from the reference fix."""
    out, seen = [], {c.should_be for c in case.changes}
    change = case.changes[0]
    for old, new in ALTERNATIVES:
        if len(out) >= wanted:
            break
        if old in change.current:
            edited = change.current.replace(old, new, 1)
            if edited not in seen:
                seen.add(edited)
                alt = Change(change.file, change.line, change.current, edited)
                out.append(diagnosis(case, [alt], f"replace {old.strip()!r} with {new.strip()!r}", "medium"))
    return out


class CorpusAgent:
    """`on_reply` for ScriptedAPI: identifies the case from the request, answers its turn."""

    def __init__(self, cases: list[Case]) -> None:
        self.cases = sorted(cases, key=lambda c: -len(c.module))  # longest module name first

    def case_of(self, body: dict[str, Any]) -> Case | None:
        """The case whose module the repair context names (the code around the failures shows it)."""
        first = json.dumps(body["messages"][0]["content"])
        return next((c for c in self.cases if re.search(rf"(?<![\w.]){re.escape(c.module)}", first)), None)

    def __call__(self, role: str, turn: int, body: dict[str, Any]) -> Step:
        case = self.case_of(body)
        if case is None:
            return "The repair context names no module of the corpus: I cannot tell which case this is."
        return self.debugger(case, turn, body) if role == "debugger" else self.coder(turn, body)

    def debugger(self, case: Case, turn: int, body: dict[str, Any]) -> Step:
        if turn == 0:
            return [("list_files", {"path": "."})]
        if turn == 1:
            return [("read_file", {"path": case.module})]
        if turn == 2 and case.function:
            return [("search", {"pattern": f"{case.function}("})]
        if turn > 3:
            return "I have no further distinct hypothesis that the code supports."
        task = body["messages"][0]["content"][1]["text"]
        wanted = int(m.group(1)) if (m := re.search(r"Submit (\d+) DISTINCT", task)) else 1
        found = [diagnosis(case, case.changes, "restore the intended behaviour of the buggy expression", "high")]
        found += alternatives(case, wanted - 1)
        return [("submit_diagnosis", d) for d in found]

    @staticmethod
    def coder(turn: int, body: dict[str, Any]) -> Step:
        task = body["messages"][0]["content"][1]["text"]
        plan = json.loads(task.split("```json", 1)[1].split("```", 1)[0])
        changes = plan.get("fix", {}).get("changes", [])
        if turn == 0:
            return [("read_file", {"path": changes[0]["file"]})] if changes else "no change to make"
        if turn == 1:
            return [
                ("replace_in_file", {"path": c["file"], "old": c["current"], "new": c["should_be"]}) for c in changes
            ]
        refused = any(b.get("is_error") for b in body["messages"][-1]["content"] if isinstance(b, dict))
        return [("finish", {"summary": plan["fix"]["description"], "confidence": 0.2 if refused else 0.8})]


class CountingAPI(ScriptedAPI):
    """ScriptedAPI that also books each reply's usage to its case and role."""

    def __init__(self, agent: CorpusAgent, tally: Tally) -> None:
        super().__init__(on_reply=agent)
        self.agent, self.tally = agent, tally

    def _reply(self, data: dict[str, Any], step: Step | None = None) -> dict[str, Any]:
        reply = super()._reply(data, step)
        case = self.agent.case_of(data)
        self.tally.add(case.name if case else "(unknown)", self.role(data), str(data.get("model")), reply["usage"])
        return reply


def run_bench(strategies: list[str], only: list[str], parallel: int, base_url: str, scratch: Path) -> dict[str, Any]:
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-scripted-not-a-real-key",
        "ANTHROPIC_BASE_URL": base_url,
        "NO_PROXY": "127.0.0.1",
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(name, None)
    command = [
        sys.executable,
        "-m",
        "explore",
        "bench",
        str(CASES),
        "--agent",
        "anthropic",
        "--parallel",
        str(parallel),
        "--json",
        "--out",
        str(scratch / "bench"),
        *(a for s in strategies for a in ("--strategy", s)),
        *(a for c in only for a in ("--case", c)),
    ]
    done = subprocess.run(command, env=env, cwd=scratch, stdout=subprocess.PIPE, text=True)
    line = next((out for out in reversed(done.stdout.splitlines()) if out.startswith("{")), "")
    if not line:
        sys.exit(f"explore bench printed no JSON (exit {done.returncode})")
    return json.loads(line)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(bench: dict[str, Any], parallel: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for strategy in bench["strategies"]:
        runs = [r for r in bench["results"] if r["strategy"] == strategy]
        per_iteration = [r["usage"].get("cost_usd", 0.0) / r["iterations"] for r in runs if r["iterations"]]
        calls = [r["usage"].get("calls", 0) / r["iterations"] for r in runs if r["iterations"]]
        if not per_iteration:
            print(
                f"\n{strategy}: no run got to an iteration: "
                + "; ".join(f"{r['case']} {r['status']} ({r.get('stop_reason') or r.get('error')})" for r in runs)
            )
            continue
        tokens = {k: sum(r["usage"].get(k, 0) for r in runs) for k in USAGE_KEYS}
        iterations = sum(r["iterations"] for r in runs)
        figures[strategy] = {
            "runs": len(runs),
            "iterations": iterations,
            "errors": sum(1 for r in runs if r.get("error")),
            "oracle_repaired": sum(1 for r in runs if r["repaired"]),
            "cost_per_iteration_usd": {
                "mean": statistics.fmean(per_iteration),
                "median": statistics.median(per_iteration),
                "p90": percentile(per_iteration, 0.9),
                "min": min(per_iteration),
                "max": max(per_iteration),
            },
            "calls_per_iteration": statistics.fmean(calls),
            "tokens_per_iteration": {k: round(v / iterations) for k, v in tokens.items()},
            "total_usd": sum(r["usage"].get("cost_usd", 0.0) for r in runs),
        }
        f = figures[strategy]
        c = f["cost_per_iteration_usd"]
        for r in runs:
            if not r["repaired"]:
                print(
                    f"  not repaired: {r['case']} [{strategy}] {r['status']}, {r['iterations']} iteration(s): "
                    f"{r.get('stop_reason') or r.get('error')}"
                )
        print(
            f"\n{strategy}: {len(runs)} runs, {iterations} iterations, --parallel {parallel}, "
            f"oracle-repaired {f['oracle_repaired']}/{len(runs)}, errors {f['errors']}"
        )
        print(
            f"  $ per iteration: mean {c['mean']:.4f}  median {c['median']:.4f}  p90 {c['p90']:.4f}  "
            f"min {c['min']:.4f}  max {c['max']:.4f}   calls/iteration {f['calls_per_iteration']:.1f}"
        )
        print(
            "  tokens per iteration: "
            + "  ".join(
                f"{k.replace('_input_tokens', '').replace('_tokens', '')} {v:,}"
                for k, v in f["tokens_per_iteration"].items()
            )
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategy", action="append", default=None)
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--parallel", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="save the figures and per-case tallies as JSON")
    args = parser.parse_args()
    strategies = args.strategy or ["conservative", "exploratory"]
    cases = [load_case(p) for p in sorted(CASES.iterdir()) if (p / "fix.patch").is_file()]
    tally = Tally()
    api = CountingAPI(CorpusAgent(cases), tally)
    with serve(api) as url, tempfile.TemporaryDirectory(prefix="explore-claude-cost-") as scratch:
        bench = run_bench(strategies, args.case, args.parallel, url, Path(scratch))
    figures = report(bench, args.parallel)
    roles: dict[str, dict[str, float]] = {}
    for per_role in tally.by_case.values():
        for role, row in per_role.items():
            into = roles.setdefault(role, dict.fromkeys(row, 0))
            for key, value in row.items():
                into[key] += value
    iterations = sum(f["iterations"] for f in figures.values())
    print(
        "\nper iteration by role (all strategies): "
        + "   ".join(
            f"{role} ${row['cost_usd'] / iterations:.4f} in {row['calls'] / iterations:.1f} calls"
            for role, row in sorted(roles.items())
        )
    )
    served = sum(r["cost_usd"] for r in roles.values())
    uncached = sum(r["uncached_usd"] for r in roles.values())
    print(
        f"without prompt caching the same calls would cost ${uncached / iterations:.4f} per iteration "
        f"(caching saves {1 - served / uncached:.0%})"
    )
    claimed = sum(f["total_usd"] for f in figures.values())
    print(f"server-side total ${served:.4f} vs explore's own usage ${claimed:.4f} (should match)")
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "figures": figures,
                    "roles": roles,
                    "by_case": tally.by_case,
                    "bench": {k: bench[k] for k in ("started_at", "duration_s", "parallel")},
                },
                indent=1,
            )
        )
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
