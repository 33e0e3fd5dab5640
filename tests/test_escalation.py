"""escalation: every row of PATTERNS with a positive example, a negative set, and the classifiers."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from explore.decide import escalation
from explore.decide.escalation import PATTERNS
from explore.model.errors import Escalation
from explore.model.runstate import EscalationCategory, EscalationInfo

# One real-looking positive example per row of PATTERNS. A new row without an example fails
# test_every_pattern_has_an_example.
EXAMPLES: dict[str, str] = {
    "unauthorized": "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://api.example.com/v1",
    "forbidden": "urllib.error.HTTPError: HTTP Error 403: Forbidden",
    "rate_limit": "anthropic.RateLimitError: Error code: 429 - rate_limit_error",
    "connection_refused": "ConnectionRefusedError: [Errno 111] Connection refused",
    "dns": "socket.gaierror: [Errno -2] Name or service not known",
    "rm_rf": "    subprocess.run('rm -rf /var/lib/app/data', shell=True)",
    "rmtree": "    shutil.rmtree(self.data_dir)",
    "drop_table": '    cursor.execute("DROP TABLE users")',
    "truncate": '    conn.execute("TRUNCATE TABLE orders")',
    "delete_all": '    db.execute("DELETE FROM sessions")',
    "reset_database": "    redis_client.flushall()",
    "ambiguous": "AssertionError: the requirement is ambiguous: should empty input return None or raise?",
}

# Texts close to the patterns that must match none of them.
NEGATIVES: list[str] = [
    "AssertionError: assert 401 == 200",
    "assert response.status_code == 403",
    "KeyError: 'unauthorized_user'",
    "ConnectionResetError: [Errno 104] Connection reset by peer",
    "TimeoutError: read timed out after 30 seconds",
    "ZeroDivisionError: division by zero",
    "    os.remove(tmp_file)",
    "    shutil.copytree(src, dst)",
    "    rm_rf_helper = None",
    "    subprocess.run(['rm', 'notes.txt'])",
    '    cursor.execute("SELECT * FROM users WHERE id = ?", (uid,))',
    '    cursor.execute("DELETE FROM sessions WHERE expired = 1")',
    '    cursor.execute("CREATE TABLE users (id INTEGER)")',
    "    value = truncated(text, 10)",
    "    drop_duplicates(frame)",
    "    limit = rate * 2",
    "    self.reset_counter()",
    "the requirement is documented in README.md",
    "ValueError: invalid literal for int() with base 10: '4x'",
]

BY_NAME = {pattern.name: pattern for pattern in PATTERNS}


def test_every_pattern_has_an_example() -> None:
    assert len(BY_NAME) == len(PATTERNS), "pattern names must be unique"
    assert set(EXAMPLES) == set(BY_NAME)


def test_patterns_are_well_formed() -> None:
    categories = {"external_service", "destructive", "ambiguous_requirements"}
    for pattern in PATTERNS:
        assert pattern.category in categories, pattern.name
        assert pattern.reason and pattern.action, pattern.name


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_pattern_matches_its_example(name: str) -> None:
    pattern = BY_NAME[name]
    text = EXAMPLES[name]
    assert pattern.regex.search(text), f"{name} does not match {text!r}"
    # the example is classified as this row (no earlier row steals it)
    assert escalation.match(text, (pattern.category,)) is pattern
    # …also when buried in a longer output
    assert escalation.match(f"collected 3 items\n\n{text}\n\n1 failed in 0.2s", (pattern.category,)) is pattern


@pytest.mark.parametrize("text", NEGATIVES)
def test_negative_examples_match_nothing(text: str) -> None:
    assert [p.name for p in PATTERNS if p.regex.search(text)] == []


def test_match_respects_categories() -> None:
    assert escalation.match(EXAMPLES["rmtree"], ("external_service",)) is None
    assert escalation.match(EXAMPLES["forbidden"], ("destructive",)) is None


def test_classify_failures_and_agent_output() -> None:
    assert (
        escalation.classify_failures(["assert 1 == 2", EXAMPLES["connection_refused"]]) is BY_NAME["connection_refused"]
    )
    assert escalation.classify_failures([EXAMPLES["ambiguous"]]) is BY_NAME["ambiguous"]
    assert escalation.classify_failures([EXAMPLES["rm_rf"]]) is None  # destructive is about patches
    assert escalation.classify_failures(NEGATIVES) is None
    assert escalation.classify_agent_output(EXAMPLES["rate_limit"]) is BY_NAME["rate_limit"]
    assert escalation.classify_agent_output(EXAMPLES["ambiguous"]) is None


# --- patches ---------------------------------------------------------------------------------

PATCH = """\
diff --git a/src/store.py b/src/store.py
--- a/src/store.py
+++ b/src/store.py
@@ -1,4 +1,4 @@
 import shutil
-    shutil.rmtree(cache_dir)
+    cache_dir.mkdir(exist_ok=True)
 # DROP TABLE users is what the old code did
diff --git a/tests/test_store.py b/tests/test_store.py
--- a/tests/test_store.py
+++ b/tests/test_store.py
@@ -1,2 +1,3 @@
 def teardown():
+    shutil.rmtree(tmp)
"""


def test_classify_patch_ignores_removed_and_context_lines_and_test_files() -> None:
    assert escalation.classify_patch(PATCH, ("tests/test_store.py",)) is None


def test_classify_patch_finds_destructive_added_lines() -> None:
    # the same patch, test file not excluded: its added rmtree counts
    assert escalation.classify_patch(PATCH) is BY_NAME["rmtree"]
    added = PATCH.replace("+    cache_dir.mkdir(exist_ok=True)", '+    conn.execute("DROP TABLE users")')
    assert escalation.classify_patch(added, ("tests/test_store.py",)) is BY_NAME["drop_table"]


def test_classify_patch_new_file() -> None:
    patch = "--- /dev/null\n+++ b/scripts/reset.sh\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+rm -rf build/ data/\n"
    assert escalation.classify_patch(patch) is BY_NAME["rm_rf"]
    assert escalation.classify_patch(patch, ("scripts/reset.sh",)) is None


def test_added_lines() -> None:
    assert escalation.added_lines(PATCH, ("tests/test_store.py",)) == "    cache_dir.mkdir(exist_ok=True)"
    assert escalation.added_lines(PATCH).splitlines() == [
        "    cache_dir.mkdir(exist_ok=True)",
        "    shutil.rmtree(tmp)",
    ]


# --- options ---------------------------------------------------------------------------------


def test_options_name_resume_hint_rollback_and_clean() -> None:
    options = escalation.options_for("20240101-abc", 4)
    text = "\n".join(options)
    assert 'explore resume 20240101-abc --hint "' in text
    assert "explore rollback 20240101-abc --to 3" in text
    assert "explore clean" in text
    assert any(o.startswith("skip") for o in options)
    assert not any("rollback" in o for o in escalation.options_for("r", 0))  # nothing merged: nothing to roll back to


def test_options_offer_only_what_can_help_for_the_category_and_the_generator() -> None:
    infra = "\n".join(escalation.options_for("run-1", 3, EscalationCategory.infrastructure, "anthropic"))
    assert "explore resume run-1" in infra and "--hint" not in infra and "rollback" not in infra
    service = "\n".join(escalation.options_for("run-1", 3, EscalationCategory.external_service, "command"))
    assert "--hint" not in service and "rollback" not in service
    mutate = "\n".join(escalation.options_for("run-1", 3, EscalationCategory.ambiguous_requirements, "mutate"))
    assert "--hint" not in mutate and "mutate cannot use a hint" in mutate and "explore rollback run-1 --to 2" in mutate
    chain = "\n".join(escalation.options_for("run-1", 3, EscalationCategory.ambiguous_requirements, "anthropic,mutate"))
    assert 'explore resume run-1 --hint "' in chain


def test_every_suggested_command_exists() -> None:
    from explore.cli import commands as cli

    for option in escalation.options_for("run-1", 3):
        words = option.split()
        for i, word in enumerate(words[:-1]):
            if word == "explore":
                assert words[i + 1] in cli.main.commands, option


def test_info_carries_the_options() -> None:
    info = escalation.info(EscalationCategory.destructive, "why", "what to do", "run-1", 2)
    assert (info.category, info.reason, info.suggested_action) == (EscalationCategory.destructive, "why", "what to do")
    assert info.options == escalation.options_for("run-1", 2)


@pytest.mark.parametrize("category", list(EscalationCategory))
def test_categories_serialise_as_their_names_and_read_back(category: EscalationCategory) -> None:
    """The JSON summary and state files keep the plain strings they always had."""
    info = escalation.info(category, "why", "what to do", "run-1", 1)
    dumped = json.loads(info.model_dump_json())
    assert (
        dumped["category"] == category.value and f"HELP NEEDED ({info.category})" == f"HELP NEEDED ({category.value})"
    )
    assert EscalationInfo.model_validate(dumped) == info
    assert EscalationInfo.model_validate({**dumped, "category": category.value}).category is category


def test_an_unknown_category_fails_where_it_is_raised_and_where_it_is_read() -> None:
    with pytest.raises(ValueError, match="'infra'"):
        Escalation("infra", "why", "what")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        EscalationInfo(category="infra", reason="why", suggested_action="what")  # type: ignore[arg-type]
    assert Escalation("destructive", "why", "what").category is EscalationCategory.destructive  # type: ignore[arg-type]


@pytest.mark.parametrize("field, value", [("status", "done"), ("criticality", {"t::x": "urgent"})])
def test_statuses_and_criticality_levels_in_the_state_are_closed_sets(field: str, value: object) -> None:
    from explore.model.runstate import RunState

    assert RunState.model_validate({"run_id": "r", "repo": "/x", "status": "partial", "criticality": {"t::x": "low"}})
    with pytest.raises(ValidationError, match=field):
        RunState.model_validate({"run_id": "r", "repo": "/x", field: value})


@pytest.mark.parametrize(
    ("asked", "agent_cmd", "resolved", "needles"),
    [
        ("auto", None, "mutate", ["generator: mutate (built in, offline", "auto: no ANTHROPIC_API_KEY", "--agent"]),
        (
            "auto",
            None,
            "anthropic",
            ["generator: anthropic (Claude", "auto: ANTHROPIC_API_KEY is set", "--agent mutate"],
        ),
        ("auto", "my-agent", "command", ["generator: command (your agent command", "auto: --agent-cmd is given"]),
        (
            "anthropic,mutate",
            None,
            "anthropic,mutate",
            ["anthropic (Claude", ", then mutate (", "chosen with --agent anthropic,mutate"],
        ),
    ],
)
def test_a_run_says_which_generator_it_uses_and_why(
    asked: str, agent_cmd: str | None, resolved: str, needles: list[str]
) -> None:
    from explore.generators import why_agent

    line = why_agent(asked, agent_cmd, resolved)
    assert all(n in line for n in needles), line
