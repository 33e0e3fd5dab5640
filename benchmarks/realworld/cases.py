"""The real-library cases: which sdist, which test dependencies, which one-line bug.

Each bug replaces exactly one line of library code (never a test file) with a plausible
mistake; the build checks that the line occurs once, that the clean sdist's suite passes those
tests and that the broken one fails a few of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Every case's venv has these, pinned, beside its own test dependencies.
BASE_REQUIREMENTS = ["pytest==8.3.5", "pytest-json-report==1.5.0", "coverage==7.6.1"]


@dataclass(frozen=True)
class Bug:
    path: str  # relative to the sdist's root
    line: str  # the exact original line, indentation included
    broken: str  # what it becomes
    kind: str  # off_by_one | wrong_operator | swapped_operands | missing_call | wrong_constant | inverted_condition
    after: str = ""  # the line just before it, where `line` alone is not unique


@dataclass(frozen=True)
class Case:
    name: str
    library: str
    version: str
    bug: Bug
    requirements: list[str] = field(default_factory=list)  # the suite's own test dependencies
    test_paths: list[str] = field(default_factory=lambda: ["tests/"])  # where the tests live (judging)
    # Config edits the suite needs without pytest-cov: (path, old text, new text).
    config_edits: list[tuple[str, str, str]] = field(default_factory=list)
    why_requirements: str = ""


CASES: list[Case] = [
    Case(
        "cachetools_ttl_boundary",
        "cachetools",
        "5.3.3",
        Bug(
            "src/cachetools/__init__.py",
            "        while curr is not root and not (time < curr.expires):",
            "        while curr is not root and not (time <= curr.expires):",
            "wrong_operator",
        ),
    ),
    Case(
        "humanize_apnumber_bound",
        "humanize",
        "4.9.0",
        Bug("src/humanize/number.py", "    if not 0 <= value < 10:", "    if not 0 <= value <= 10:", "off_by_one"),
        requirements=["freezegun==1.5.1", "humanize==4.9.0"],
        why_requirements="humanize reads its version from installed metadata: the venv holds the same "
        "release's wheel, shadowed by the case's own src/ (explore puts the worktree first on PYTHONPATH)",
    ),
    Case(
        "inflection_camelize_slice",
        "inflection",
        "0.5.1",
        Bug(
            "inflection/__init__.py",
            "        return string[0].lower() + camelize(string)[1:]",
            "        return string[0].lower() + camelize(string)[2:]",
            "off_by_one",
        ),
        test_paths=["test_inflection.py"],
    ),
    Case(
        "jmespath_slice_step",
        "jmespath",
        "1.0.1",
        Bug(
            "jmespath/lexer.py",
            "        while self._next() in self.VALID_NUMBER:",
            "        while self._next() not in self.VALID_NUMBER:",
            "inverted_condition",
        ),
    ),
    Case(
        "marshmallow_length_min",
        "marshmallow",
        "3.21.1",
        Bug(
            "src/marshmallow/validate.py",
            "        if self.min is not None and length < self.min:",
            "        if self.min is not None and length <= self.min:",
            "wrong_operator",
        ),
        requirements=["pytz==2024.1", "simplejson==3.19.3", "marshmallow==3.21.1"],
        why_requirements="marshmallow's version test reads installed metadata (see humanize)",
    ),
    Case(
        "inflection_parameterize_sep",
        "inflection",
        "0.5.1",
        Bug("inflection/__init__.py", "    if separator:", "    if not separator:", "inverted_condition"),
        test_paths=["test_inflection.py"],
    ),
    Case(
        "dateutil_easter_orthodox",
        "python-dateutil",
        "2.9.0.post0",
        Bug("src/dateutil/easter.py", "            if y > 1600:", "            if y < 1600:", "inverted_condition"),
        requirements=["six==1.16.0", "freezegun==1.5.1", "hypothesis==6.112.0", "pytest-cov==5.0.0"],
        why_requirements="pytest-cov registers the no_cover mark the suite uses under filterwarnings=error",
    ),
    Case(
        "tabulate_pipe_colons",
        "tabulate",
        "0.9.0",
        Bug(
            "tabulate/__init__.py",
            '        return ("-" * (w - 1)) + ":"',
            '        return ("-" * (w - 2)) + ":"',
            "off_by_one",
        ),
        requirements=["wcwidth==0.2.13"],
        test_paths=["test/"],
    ),
    Case(
        "wcwidth_zero_width",
        "wcwidth",
        "0.2.13",
        Bug(
            "wcwidth/wcwidth.py",
            "        return 0",
            "        return 1",
            "wrong_constant",
            after="    if _bisearch(ucs, ZERO_WIDTH[_unicode_version]):",
        ),
        config_edits=[
            (
                "tox.ini",
                "          --cov-append --cov-report=html --color=yes --ignore=setup.py --ignore=.tox\n"
                "          --cov=wcwidth\n",
                "          --color=yes --ignore=setup.py --ignore=.tox\n",
            )
        ],
    ),
    Case(
        "parse_width_swap",
        "parse",
        "1.20.1",
        Bug(
            "parse.py",
            '            if string[number_start] == "0" and len(string) - number_start > 2:',
            '            if string[number_start] == "0" and number_start - len(string) > 2:',
            "swapped_operands",
        ),
    ),
]
