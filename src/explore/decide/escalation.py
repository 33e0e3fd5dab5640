"""When a person is needed: the always-escalate categories as data, and the pure classifiers.

Each pattern is a row of PATTERNS; each row has a test in tests/test_escalation.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.runstate import EscalationCategory, EscalationInfo

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


def classify_patch(patch: str, test_files: tuple[str, ...] = ()) -> Pattern | None:
    return match(added_lines(patch, test_files), (DESTRUCTIVE,))


def classify_agent_output(text: str) -> Pattern | None:
    return match(text, (EXTERNAL,))


ENVIRONMENT = (EscalationCategory.infrastructure, EscalationCategory.external_service)
"""Categories no code edit can help: neither a hint nor a rollback is offered."""
HINTLESS = frozenset({"mutate"})
"""Generators that cannot use a person's hint (mutate searches mutations; it reads no text)."""


def uses_hints(generator: str) -> bool:
    """True when some generator of the chain reads a hint (an unknown generator is assumed to)."""
    return not generator or any(g not in HINTLESS for g in generator.split(","))


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
