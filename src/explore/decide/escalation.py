"""When a person is needed: the always-escalate categories as data, and the pure classifiers.

Each pattern is a row of PATTERNS; each row has a test in tests/test_escalation.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import agentnames
from ..model.runstate import EscalationCategory, EscalationInfo
from . import removal

EXTERNAL, DESTRUCTIVE, AMBIGUOUS = (
    EscalationCategory.external_service,
    EscalationCategory.destructive,
    EscalationCategory.ambiguous_requirements,
)


@dataclass(frozen=True)
class Pattern:
    category: EscalationCategory
    """external_service | destructive | ambiguous_requirements"""
    name: str
    regex: re.Pattern[str]
    reason: str
    action: str


def _p(category: EscalationCategory, name: str, regex: str, reason: str, action: str) -> Pattern:
    return Pattern(category, name, re.compile(regex, re.IGNORECASE | re.MULTILINE), reason, action)


PATTERNS: tuple[Pattern, ...] = (
    _p(
        EXTERNAL,
        "unauthorized",
        r"\b401\b[^\n]{0,40}unauthori[sz]ed|unauthori[sz]ed[^\n]{0,40}\b401\b|HTTP Error 401",
        "an external service rejected the credentials (401 Unauthorized)",
        "check the credentials the tests or the agent use (API keys, tokens), then resume",
    ),
    _p(
        EXTERNAL,
        "forbidden",
        r"\b403\b[^\n]{0,40}forbidden|forbidden[^\n]{0,40}\b403\b|HTTP Error 403",
        "an external service refused access (403 Forbidden)",
        "check the permissions of the account the tests or the agent use, then resume",
    ),
    _p(
        EXTERNAL,
        "rate_limit",
        r"rate[ _-]?limit|\b429\b[^\n]{0,40}too many requests|too many requests[^\n]{0,40}\b429\b",
        "an external service is rate-limiting requests",
        "wait for the quota to reset (or raise it), then resume",
    ),
    _p(
        EXTERNAL,
        "connection_refused",
        r"connection refused|ECONNREFUSED|\[Errno 111\]",
        "a service the tests need refused the connection",
        "start the service the tests talk to (database, API, mock server), then resume",
    ),
    _p(
        EXTERNAL,
        "dns",
        r"Name or service not known|Temporary failure in name resolution|nodename nor servname|getaddrinfo failed|\[Errno -[23]\]",
        "a host name the tests need could not be resolved (DNS)",
        "check the network and the host names in the test configuration, then resume",
    ),
    _p(
        DESTRUCTIVE,
        "rm_rf",
        r"\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r",
        "the fix runs `rm -rf`",
        "review the change by hand; explore will not apply destructive fixes on its own",
    ),
    _p(
        DESTRUCTIVE,
        "rmtree",
        r"shutil\.rmtree\s*\(",
        "the fix deletes directory trees (shutil.rmtree)",
        "review the change by hand before applying it",
    ),
    _p(
        DESTRUCTIVE,
        "drop_table",
        r"\bDROP\s+(TABLE|DATABASE|SCHEMA)\b",
        "the fix drops database tables",
        "review the change by hand; it would destroy data",
    ),
    _p(
        DESTRUCTIVE,
        "truncate",
        r"\bTRUNCATE\s+(TABLE\s+)?\w+",
        "the fix truncates a database table",
        "review the change by hand; it would destroy data",
    ),
    _p(
        DESTRUCTIVE,
        "delete_all",
        r"\bDELETE\s+FROM\s+\w+\s*(;|\"|'|$)",
        "the fix deletes every row of a table",
        "review the change by hand; it would destroy data",
    ),
    _p(
        DESTRUCTIVE,
        "reset_database",
        r"\b(flushall|flushdb|dropDatabase|reset_db|migrate\s+reset|db\.drop_all)\b",
        "the fix resets a database",
        "review the change by hand; it would destroy data",
    ),
    _p(
        AMBIGUOUS,
        "ambiguous",
        r"requirements? (is |are )?(ambiguous|unclear|undecided)|ambiguous requirement|spec(ification)? (is )?(ambiguous|unclear)",
        "the tests or the code say the requirement itself is undecided",
        "decide what the behaviour should be and pass it with `explore resume --hint`",
    ),
)

PATTERNS_BY_NAME = {p.name: p for p in PATTERNS}

INFRASTRUCTURE_ACTION = "fix the test environment (command, interpreter, dependencies, collection errors), then resume"


def match(text: str, categories: tuple[EscalationCategory, ...]) -> Pattern | None:
    for pattern in PATTERNS:
        if pattern.category in categories and pattern.regex.search(text):
            return pattern
    return None


def added_lines(patch: str, skip_files: tuple[str, ...] = ()) -> str:
    """The lines a patch adds, outside the given files."""
    lines, current = [], ""
    for line in patch.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else line[4:]
        elif line.startswith("+") and current not in skip_files:
            lines.append(line[1:])
    return "\n".join(lines)


def classify_failures(messages: list[str]) -> Pattern | None:
    """External-service errors or undecided requirements in test failures."""
    return match("\n".join(messages), (EXTERNAL, AMBIGUOUS))


HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def added_by_file(patch: str, skip_files: tuple[str, ...] = ()) -> dict[str, dict[int, str]]:
    """The lines a patch adds, by file and line number in the file after it, outside the given files."""
    found: dict[str, dict[int, str]] = {}
    current, line = "", 0
    for text in patch.splitlines():
        if text.startswith("+++ "):
            current = text[6:] if text.startswith("+++ b/") else text[4:]
            continue
        if text.startswith("--- ") or text.startswith("diff --git"):
            continue
        hunk = HUNK.match(text)
        if hunk:
            line = int(hunk.group(1))
            continue
        if text.startswith("+"):
            if current not in skip_files:
                found.setdefault(current, {})[line] = text[1:]
            line += 1
        elif text.startswith(" "):
            line += 1
    return found


@dataclass(frozen=True)
class Sources:
    """The texts a patch's removals are judged on: a file before the change, and as the change left it."""

    before: removal.Source
    after: removal.Source


@dataclass(frozen=True)
class PatchReview:
    """What a patch's added lines say: destructive (the first row that decided, None: not), and
    the removals it adds that were judged not destructive, each with the rule that decided."""

    destructive: Pattern | None
    allowed: list[removal.Removal]


BY_EFFECT = "rmtree"
"""The row judged by effect in Python files (removal.py); the others are destructive by name."""


def review_patch(patch: str, test_files: tuple[str, ...] = (), sources: Sources | None = None) -> PatchReview:
    """Destructive by effect, not by name: in the Python files of the change, every removal call it
    adds is judged by who created what it removes (removal.py); a match of the `rmtree` row no call
    explains (a comment, an alias), the other destructive rows, and every file explore cannot read
    are destructive by name, as before. Without sources, everything is judged by name."""
    added = added_by_file(patch, test_files)
    allowed: list[removal.Removal] = []
    for file, lines in added.items():
        text = "\n".join(lines.values())
        by_name = [p for p in PATTERNS if p.category == DESTRUCTIVE and p.regex.search(text)]
        judged: list[removal.Removal] | None = None
        after = sources.after(file) if sources is not None and file.endswith(".py") else None
        if sources is not None and after is not None:
            if not any(r in after for r in removal.REMOVERS):
                judged = []  # no removal in the file: nothing to parse, no earlier version to read
            else:
                judged = removal.judge(file, sources.before(file), after, set(lines), sources.after)
        if judged is None:
            if by_name:
                return PatchReview(by_name[0], allowed)
            continue
        for row in by_name:
            if row.name != BY_EFFECT:
                return PatchReview(row, allowed)
        explained = {r.line for r in judged}
        unexplained = [
            n for n, t in lines.items() if PATTERNS_BY_NAME[BY_EFFECT].regex.search(t) and n not in explained
        ]
        bad = next((r for r in judged if r.destructive), None)
        if bad is not None:
            return PatchReview(_by_effect(bad), allowed)
        if unexplained:
            return PatchReview(PATTERNS_BY_NAME[BY_EFFECT], allowed)
        allowed += judged
    return PatchReview(None, allowed)


def _by_effect(found: removal.Removal) -> Pattern:
    """The row a destructive removal escalates as: its reason says which rule decided."""
    row = PATTERNS_BY_NAME[BY_EFFECT]
    return Pattern(
        DESTRUCTIVE,
        row.name,
        row.regex,
        f"the fix deletes a directory tree it did not create: {found.describe()}",
        row.action,
    )


def classify_patch(patch: str, test_files: tuple[str, ...] = (), sources: Sources | None = None) -> Pattern | None:
    return review_patch(patch, test_files, sources).destructive


def classify_agent_output(text: str) -> Pattern | None:
    return match(text, (EXTERNAL,))


ENVIRONMENT = (EscalationCategory.infrastructure, EscalationCategory.external_service)
"""Categories no code edit can help: neither a hint nor a rollback is offered."""
HINTLESS = frozenset({"mutate"})
"""Generators that cannot use a person's hint (mutate searches mutations; it reads no text)."""


def uses_hints(generator: str) -> bool:
    """True when some generator of the label (a chain's members, a fleet's slots) reads a hint (an
    unknown generator is assumed to)."""
    return not generator or any(g not in HINTLESS for g in agentnames.members(generator))


def options_for(
    run_id: str,
    last_iteration: int,
    category: EscalationCategory | None = None,
    generator: str = "",
    merged: bool = True,
) -> list[str]:
    """The exact commands a person can use to go on — only those that can help for the category
    and the generator (a rollback only once something was merged)."""
    options = []
    if category in ENVIRONMENT:
        options.append(f"fix what the reason names, then continue: explore resume {run_id}")
    elif uses_hints(generator):
        options.append(f'retry with a hint: explore resume {run_id} --hint "what the fix should do"')
    else:
        options.append(
            f"{generator} cannot use a hint: start a new run with a generator that can "
            "(--agent anthropic with ANTHROPIC_API_KEY, or --agent-cmd CMD)"
        )
    if last_iteration > 0 and merged and category not in ENVIRONMENT:
        options.append(f"roll back: explore rollback {run_id} --to {last_iteration - 1}")
    if last_iteration > 0 and merged:
        options.append(f"take what was merged as it is: explore apply {run_id}")
    options += [
        "skip: leave this repository for now (the run branch keeps what was merged)",
        "abort: explore clean   (removes the run's worktrees, locks and leftovers)",
    ]
    return options


def info(
    category: EscalationCategory,
    reason: str,
    action: str,
    run_id: str,
    last_iteration: int,
    generator: str = "",
    merged: bool = True,
) -> EscalationInfo:
    return EscalationInfo(
        category=category,
        reason=reason,
        suggested_action=action,
        options=options_for(run_id, last_iteration, category, generator, merged),
    )
