"""`--help` in groups with examples: a click command whose options are listed under headings."""

from __future__ import annotations

from typing import ClassVar

import click


class GroupedCommand(click.Command):
    """Options under the headings of `groups` (heading → option names, in order); the rest under
    "Other options". The epilog holds the examples, printed as written."""

    groups: ClassVar[dict[str, list[str]]] = {}

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records = {p.name: p.get_help_record(ctx) for p in self.get_params(ctx) if isinstance(p, click.Option)}
        placed: set[str | None] = set()
        for heading, names in self.groups.items():
            rows = [records[n] for n in names if records.get(n)]
            placed.update(names)
            if rows:
                with formatter.section(heading):
                    formatter.write_dl(rows)  # type: ignore[arg-type]
        rest = [record for name, record in records.items() if name not in placed and record]
        if rest:
            with formatter.section("Other options"):
                formatter.write_dl(rest)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.epilog:
            with formatter.section("Examples"):
                for line in self.epilog.strip("\n").splitlines():  # as written: no rewrapping
                    formatter.write(f"{'':>{formatter.current_indent}}{line}\n")


RUN_GROUPS = {
    "What to repair": ["path_option", "tests", "since", "issue_file"],
    "How to repair": [
        "agent",
        "agent_cmd",
        "deal",
        "strategy",
        "parallel",
        "max_iterations",
        "target_pass_rate",
        "budget_usd",
        "budget_tokens",
        "search_budget",
    ],
    "How tests run": ["test_cmd", "junit_xml", "test_timeout", "branch_timeout", "branch_memory", "executor", "shards"],
    "The result": ["no_apply", "apply_partial", "json", "as_json", "junit_out", "reports_dir", "commit_reports"],
    "Talking to you": ["quiet", "verbose", "no_input"],
}
RUN_EXAMPLES = """
explore run                                  repair the failing tests of the repository here
explore run --parallel 5 --agent anthropic   five candidates an iteration, written by Claude
explore run -- tests/test_x.py::test_y       repair only this test; no other may break
explore run --since v1.4 --no-apply --json   CI: tests broken since v1.4, result left on a branch
explore run --issue bug.md --agent-cmd 'claude -p'   write a failing test from a report, then fix it
explore apply / explore undo                 take a result into your tree, or back out
"""
BENCH_GROUPS = {
    "What to measure": ["cases_dir", "only", "strategies", "agent", "agent_cmd"],
    "How it runs": ["parallel", "jobs", "case_timeout"],
    "Output": ["as_json", "out", "compare"],
}
BENCH_EXAMPLES = """
explore bench                                every built-in strategy on benchmarks/cases
explore bench --strategy conservative --strategy surgical --case prime_sieve
explore bench --json --out results/           bench.json on stdout; files in results/
explore bench --compare old/bench.json new/bench.json   what got better or worse
"""
