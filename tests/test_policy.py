"""decide/policy: what a candidate may change, as an attacker would try it (pure: entries in, violations out)."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from explore.decide import policy
from explore.decide.policy import Entry, Policy, Rule

TRACKED = frozenset(
    {
        "pyproject.toml",
        "calc.py",
        "pkg/__init__.py",
        "pkg/core.py",
        "pkg/_helpers.py",
        "pkg/testing.py",
        "pkg/logo.png",
        "src/lib2/__init__.py",
        "src/lib2/mod.py",
        "docs/index.md",
        "tests/test_calc.py",
        "scripts/run.sh",
    }
)
POLICY = Policy(
    tracked=TRACKED,
    test_patterns=("tests/**", "**/test_*.py", "**/conftest.py", "test_*.py", "conftest.py"),
    reserved=frozenset(sys.stdlib_module_names) | {"numpy", "requests"},
    test_support=frozenset({"pkg/testing.py"}),
    frozen=frozenset({"tests/test_issue.py"}),
)


def rules(*entries: Entry, value: Policy = POLICY) -> list[tuple[str, Rule]]:
    return [(v.path, v.rule) for v in policy.verdict(value, entries)]


@pytest.mark.parametrize(
    ("entry", "rule"),
    [
        (Entry("sitecustomize/__init__.py", "A"), Rule.startup),
        (Entry("SiteCustomize.py", "A"), Rule.startup),
        (Entry("pkg/usercustomize.py", "A"), Rule.startup),
        (Entry("deep/er/evil.pth", "A"), Rule.startup),
        (Entry("pprint.py", "A"), Rule.shadows),
        (Entry("src/json/__init__.py", "A"), Rule.shadows),
        (Entry("requests/__init__.py", "A"), Rule.shadows),
        (Entry("scripts/pprint.py", "A"), Rule.shadows),
        (Entry("Name-1.0.DIST-INFO/entry_points.txt", "A"), Rule.metadata),
        (Entry("src/calc.EGG-INFO/PKG-INFO", "A"), Rule.metadata),
        (Entry("pkg/entry_points.txt", "A"), Rule.metadata),
        (Entry("newmod.py", "A"), Rule.new_top_level),
        (Entry("newpkg/__init__.py", "A"), Rule.new_top_level),
        (Entry("src/newpkg/__init__.py", "A"), Rule.new_top_level),
        (Entry("pkg/sub/__init__.py", "A"), Rule.outside),
        (Entry("notes/todo.md", "A"), Rule.outside),
        (Entry("docs/new.md", "A"), Rule.outside),
        (Entry("pkg/link", "A", "000000", "120000", target="core.py"), Rule.link),
        (Entry("etc", "A", "000000", "120000", target="/etc"), Rule.link),
        (Entry("calc.py", "T", "100644", "120000", target="/tmp/x.py"), Rule.link),
        (Entry("vendor", "A", "000000", "160000"), Rule.gitlink),
        (Entry("pkg/core.py", "M", "100644", "100755"), Rule.mode),
        (Entry("pkg/logo.png", "M", "100644", "100644", binary=True), Rule.binary),
        (Entry("pkg/_speedups.so", "A", "000000", "100644", binary=True), Rule.binary),
        (Entry("tests/test_calc.py", "M"), Rule.test),
        (Entry("tests/test_issue.py", "M"), Rule.reproduction),
        (Entry("pkg/testing.py", "M"), Rule.test_support),
        (Entry(".explore/history.jsonl", "A"), Rule.explore_state),
        (Entry(".gitattributes", "A"), Rule.git_files),
        (Entry("pkg/.gitignore", "M"), Rule.git_files),
        (Entry("sub/.explore", "A", "000000", "120000", target="/home/me"), Rule.explore_state),
    ],
)
def test_rejected(entry: Entry, rule: Rule) -> None:
    assert rules(entry) == [(entry.path, rule)]
    reason = policy.describe(policy.verdict(POLICY, [entry])) or ""
    assert entry.path in reason and rule.value in reason


@pytest.mark.parametrize(
    "entry",
    [
        Entry("pkg/core.py", "M", "100644", "100644"),
        Entry("pkg/__init__.py", "M", "100644", "100644"),
        Entry("pkg/new_module.py", "A", "000000", "100644"),
        Entry("pkg/json.py", "A", "000000", "100644"),  # inside a package: shadows nothing
        Entry("src/lib2/extra.py", "A", "000000", "100644"),
        Entry("pkg/_helpers.py", "D", "100644", "000000"),
        Entry("calc.py", "M", "100644", "100644"),
        Entry("pkg/logo.png", "D", "100644", "000000", binary=True),
    ],
)
def test_allowed(entry: Entry) -> None:
    assert rules(entry) == []


def test_a_private_helper_renamed_inside_its_package_is_allowed() -> None:
    assert rules(Entry("pkg/_helpers.py", "D"), Entry("pkg/_support.py", "A"), Entry("pkg/core.py", "M")) == []


def test_allow_new_files_widens_new_files_only() -> None:
    wide = dataclasses.replace(POLICY, allow_new_files=("docs/**", "*.py", "tools/**"))
    assert rules(Entry("docs/new.md", "A"), Entry("newmod.py", "A"), value=wide) == []
    assert rules(Entry("pprint.py", "A"), value=wide) == [("pprint.py", Rule.shadows)]
    assert rules(Entry("tools/x.pth", "A"), value=wide) == [("tools/x.pth", Rule.startup)]
    assert rules(Entry("tools/A-1.dist-info/entry_points.txt", "A"), value=wide)[0][1] == Rule.metadata


def test_allow_test_edits_lifts_tests_and_support_never_the_reproduction() -> None:
    lax = dataclasses.replace(POLICY, allow_test_edits=True)
    assert (
        rules(
            Entry("tests/test_calc.py", "M"), Entry("pkg/testing.py", "M"), Entry("tests/test_new.py", "A"), value=lax
        )
        == []
    )
    assert rules(Entry("tests/test_issue.py", "M"), value=lax) == [("tests/test_issue.py", Rule.reproduction)]
    assert rules(Entry("tests/os.py", "A"), value=lax) == [("tests/os.py", Rule.shadows)]


def test_describe_groups_by_rule() -> None:
    found = policy.verdict(POLICY, [Entry("tests/test_calc.py", "D"), Entry("calc_checks.py", "A")])
    assert policy.describe(found) == (
        "edits test files: tests/test_calc.py; adds a new top-level module or package: calc_checks.py"
    )


SOURCES = {
    "pkg/__init__.py": "from .core import add\n",
    "pkg/core.py": "from ._helpers import twice\n\ndef add(a, b):\n    return a - b\n",
    "pkg/_helpers.py": "def twice(x):\n    assert x is not None\n    return 2 * x\n",
    "pkg/testing.py": "def assert_equal(a, b):\n    assert a == b, (a, b)\n",
    "pkg/numeric.py": "def close(a, b):\n    if abs(a - b) > 1e-9:\n        raise AssertionError(a, b)\n",
    "pkg/cli.py": "import sys\n\ndef main():\n    assert sys.argv\n",
    "tests/test_core.py": "from pkg.core import add\nfrom pkg.testing import assert_equal\nfrom pkg import numeric\n\ndef test_add():\n    assert_equal(add(2, 3), 5)\n",
    "tests/helpers/__init__.py": "",
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n",
}


def test_test_support_is_found_from_the_import_graph() -> None:
    tests = {p for p in SOURCES if p.startswith("tests/")}
    # imported by the tests, not by the library, and asserting: testing.py and numeric.py (named
    # nothing like a test); core.py and calc.py are what is tested; _helpers.py the library uses;
    # cli.py no test imports
    assert policy.test_support(SOURCES, tests) == {"pkg/testing.py", "pkg/numeric.py"}
    used = {**SOURCES, "pkg/core.py": "from . import testing\n" + SOURCES["pkg/core.py"]}
    assert policy.test_support(used, tests) == {"pkg/numeric.py"}


NUMPY_LIKE = {
    "pkg/__init__.py": "from .core import add\n",
    "pkg/core.py": "def add(a, b):\n    assert a is not None\n    return a - b\n",
    "pkg/testing/__init__.py": "from ._private.utils import assert_equal\n",
    "pkg/testing/_private/__init__.py": "",
    "pkg/testing/_private/utils.py": "def assert_equal(a, b):\n    assert a == b, (a, b)\n",
    "tests/test_core.py": "from pkg import add\nfrom pkg.testing import assert_equal\n",
}


def test_a_test_support_subpackage_is_support_with_what_re_exports_it() -> None:
    tests = {"tests/test_core.py"}
    # pkg itself is the library (core.py asserts, and only the tests import pkg: still the library's)
    assert policy.test_support(NUMPY_LIKE, tests) == {"pkg/testing/__init__.py", "pkg/testing/_private/utils.py"}
    used = {**NUMPY_LIKE, "pkg/core.py": "from .testing import assert_equal\n" + NUMPY_LIKE["pkg/core.py"]}
    assert policy.test_support(used, tests) == frozenset()  # the library uses it: the library's


def test_relative_imports_resolve_against_the_package() -> None:
    assert {"pkg.core", "pkg._helpers", "pkg._helpers.twice"} <= policy.imported(
        "src/pkg/core.py", "from ._helpers import twice\nfrom . import core\n"
    )
    assert "pkg.x" in policy.imported("pkg/sub/__init__.py", "from ..x import y\n")


def test_imports_of_every_shape_are_read() -> None:
    source = (
        "import os, json as j\n"
        "from pkg.testing import (\n    assert_equal,\n    assert_close,  # tolerance\n)\n"
        "def f():\n    from pkg import numeric; return numeric\n"
        "x = 1  # import nothing\n"
    )
    found = policy.imported("tests/test_x.py", source)
    assert {"os", "json", "pkg.testing.assert_close", "pkg.testing", "pkg.numeric", "pkg"} <= found
    assert "nothing" not in found


# ------------------------------------------------------------------------------ credentials (point 6)


def test_a_credential_in_a_patch_is_named_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    from explore.decide import redaction

    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "MY_SERVICE_SECRET", "DB_PASSWORD", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(name, f"value-of-{name.lower()}-0123456789")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # a placeholder, not a key
    monkeypatch.setenv("HOME_DIR", "value-of-home-0123456789")  # not a credential's name
    patch = b"+x = 'value-of-github_token-0123456789'\n+y = 'value-of-db_password-0123456789'\n+z = 'abc'\n"
    assert redaction.leaked(patch) == ["DB_PASSWORD", "GITHUB_TOKEN"]
    assert redaction.leaked(b"+home = 'value-of-home-0123456789'\n") == []
    shown = redaction.redact(patch.decode())
    assert "0123456789" not in shown and shown.count(redaction.REDACTED) == 2
