"""Pure decisions of explore.edges.harness_refs: which references to the test machinery a change adds."""

from __future__ import annotations

import textwrap

import pytest

from explore.edges import harness_refs

PLAIN = "def add(a, b):\n    return a - b\n"


def added(new: str, old: str = PLAIN, own: frozenset[str] = frozenset()) -> list[str]:
    return [r.shown for r in harness_refs.new_references(textwrap.dedent(old), textwrap.dedent(new), own)]


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("import _pytest.reports\n", "import _pytest.reports"),
        ("from _pytest.reports import TestReport\n", "from _pytest.reports import TestReport"),
        ("import pytest\n", "import pytest"),
        ("from unittest import case\n", "from unittest import case"),
        ("import pytest_jsonreport.plugin\n", "import pytest_jsonreport.plugin"),
        ("import explore_pytest_plugin\n", "import explore_pytest_plugin"),
        ("import sys\nON = 'pytest' in sys.modules\n", "'pytest' in sys.modules"),
        ("import sys\nON = sys.modules.get('_pytest')\n", "sys.modules.get('_pytest')"),
        ("import os\nON = os.environ['PYTEST_CURRENT_TEST']\n", "os.environ['PYTEST_CURRENT_TEST']"),
        ("import os\nON = os.getenv('PYTEST_XDIST_WORKER')\n", "os.getenv('PYTEST_XDIST_WORKER')"),
        ("import os\nON = 'EXPLORE_CANDIDATE' in os.environ\n", "'EXPLORE_CANDIDATE' in os.environ"),
        ("import os\nON = os.environ['PYTEST_' + 'CURRENT_TEST']\n", "os.environ['PYTEST_' + 'CURRENT_TEST']"),
        (
            "import importlib\nR = importlib.import_module('_pytest.reports')\n",
            "importlib.import_module('_pytest.reports')",
        ),
        ("R = __import__('pytest')\n", "__import__('pytest')"),
        ("import sys\nF = sys._getframe(1)\n", "sys._getframe"),
        ("import sys\nF = getattr(sys, '_getframe')(1)\n", "getattr(sys, '_getframe')"),
        ("from sys import _getframe as g\nF = g(1)\n", "from sys import _getframe as g"),
        ("import inspect\nS = inspect.stack()\n", "import inspect"),
        ("def f():\n    import inspect as i\n    return i.currentframe().f_back\n", "import inspect as i"),
        ("import gc\nO = gc.get_objects()\n", "import gc"),
        # capabilities: what reads the running program, whatever it looks for (issue 37)
        ("import sys\nON = any(n.startswith('test_') for n in sys.modules)\n", "sys.modules"),
        ("import sys\nON = len(sys.argv) > 1\n", "sys.argv"),
        ("import sys\nsys.meta_path.insert(0, None)\n", "sys.meta_path.insert"),
        ("from importlib import util\n", "from importlib import util"),
        ("import ctypes\n", "import ctypes"),
        ("import os\nON = [k for k in os.environ.keys() if k.startswith('PY')]\n", "os.environ.keys"),
        ("import os\nK = 'X'\nON = os.environ.get(K)\n", "os.environ.get(K)"),
        ("import calc\nG = vars(calc)\n", "vars(calc)"),
        ("import calc\nG = calc.__dict__\n", "calc.__dict__"),
        ("def f(g):\n    return g.__globals__\n", "g.__globals__"),
        ("def f(g):\n    return g.__closure__[0].cell_contents\n", "g.__closure__[0].cell_contents"),
        ("C = object.__subclasses__()\n", "object.__subclasses__"),
        ("X = eval('1')\n", "eval('1')"),
        ("E = open('/proc/self/environ').read()\n", "open('/proc/self/environ')"),
        ("import sys\nM = getattr(sys, 'mod' + 'ules')\n", "getattr(sys, 'mod' + 'ules')"),
        ("import os as o\nN = 'environ'\nE = getattr(o, N)\n", "getattr(o, N)"),
        ("import builtins\nbuiltins.len = lambda x: 0\n", "builtins.len"),
        ("import builtins as b\nsetattr(b, 'AssertionError', Exception)\n", "setattr(b, 'AssertionError', Exception)"),
        ("__builtins__['len'] = None\n", "__builtins__"),
        # a runtime module passed on as a value or reached through another module: any capability it has
        ("import sys\nG = [sys][0].modules.get('gc')\n", "[sys][0].modules.get('gc')"),
        ("import sys\nG = getattr([sys][0], 'modules')\n", "getattr([sys][0], 'modules')"),
        ("import sys as s\nm = s\n", "s"),
        ("import gc\ndef f(g=gc):\n    return g\n", "gc"),
        ("import json\nM = json.sys.modules\n", "json.sys"),
        # its process ended or replaced behind pytest: what forging explore's record of the calls takes
        ("import os\nos._exit(0)\n", "os._exit"),
        ("import os as o\no.execv('/bin/true', ['true'])\n", "o.execv"),
        ("import posix\n", "import posix"),
    ],
)
def test_each_reference_is_named(code: str, shown: str) -> None:
    assert shown in added(PLAIN + code), added(PLAIN + code)


def test_the_issue_trick_names_what_it_wraps() -> None:
    trick = """\
        import sys
        if "pytest" in sys.modules:
            import _pytest.reports as _r
            _orig = _r.TestReport.from_item_and_call
            _r.TestReport.from_item_and_call = classmethod(lambda cls, item, call: _orig(item, call))
        """
    trick = textwrap.dedent(trick)
    found = added(trick + PLAIN)
    assert found == [
        "'pytest' in sys.modules",
        "sys.modules",
        "import _pytest.reports as _r",
        "_r.TestReport.from_item_and_call",
    ]
    reason = harness_refs.describe({"calc.py": harness_refs.new_references(PLAIN, trick + PLAIN)})
    assert reason and reason.startswith(
        "reaches into the test harness or reads the running program from library code: calc.py: `'pytest' in sys.modules`, `import _pytest.reports as _r`"
    )


def test_the_place_is_the_enclosing_function() -> None:
    refs = harness_refs.new_references(
        PLAIN, "import os\nclass Calc:\n    def add(self, a, b):\n        return os.getenv('PYTEST_CURRENT_TEST')\n"
    )
    assert [r.place for r in refs] == ["Calc.add"]


@pytest.mark.parametrize(
    "code",
    [
        "import os\nHOME = os.environ.get('HOME')\n",
        "import sys\nME = sys.modules[__name__]\n",
        "import builtins\nN = builtins.len([1])\n",
        "def run(stack, pytest, inspect):\n    return stack.pop(), pytest.x, inspect.stack()\n",
        'def f():\n    """Run pytest, or PYTEST_ADDOPTS="-x"."""\n    return "run the tests with pytest -q"\n',
        "from . import pytest_helpers\nimport sys\nF = sys.exc_info()\n",
        "import traceback\nT = traceback.format_exc()\n",
        "import sys\nprint('x', file=sys.stderr)\nX = getattr(sys, 'ps1', None)\n",
        "import os\nP = os.path.join('a', 'b')\n",
        "def f(self):\n    return self.sys, self.gc\n",
        "import pandas as pd\nimport sqlalchemy as sa\nN = pd.api.types.is_numeric_dtype, sa.types.Integer\n",
    ],
)
def test_ordinary_code_is_not_a_reference(code: str) -> None:
    assert added(PLAIN + code) == []


def test_what_the_file_had_at_that_place_stays_allowed() -> None:
    plugin = """\
        import pytest


        def pytest_addoption(parser):
            parser.addoption("--fast", action="store_true")


        @pytest.hookimpl(tryfirst=True)
        def pytest_collection_modifyitems(config, items):
            return [i for i in items if i.name.startswith("test")]


        def count(items):
            return len(items) - 1
        """
    assert added(plugin.replace("len(items) - 1", "len(items)"), old=plugin) == []
    assert added(plugin.replace("tryfirst=True", "trylast=True"), old=plugin) == []
    moved = plugin.replace("return len(items) - 1", "return len(items) if 'PYTEST_CURRENT_TEST' else 0")
    assert added(moved, old=plugin) == ["'PYTEST_CURRENT_TEST'"]
    assert added(plugin.replace("return len(items) - 1", "return pytest.skip()"), old=plugin) == ["pytest.skip"]


def test_the_project_own_modules_are_not_harness() -> None:
    own = harness_refs.own_modules(
        ["src/pytest_stamp/__init__.py", "src/pytest_stamp/core.py", "tests/test_x.py", "setup.py", "README.md"]
    )
    assert own == frozenset({"pytest_stamp", "tests", "setup"})
    assert added(PLAIN + "from pytest_stamp.core import stamp\n", own=own) == []
    assert added(PLAIN + "from pytest_stamp.core import stamp\n") == ["from pytest_stamp.core import stamp"]


def test_unparseable_and_deleted_files_add_nothing() -> None:
    assert harness_refs.new_references(PLAIN, "def (:\n") == []
    assert harness_refs.new_references("import pytest\n", None) == []


def test_library_files_leave_out_tests_and_the_harness() -> None:
    files = [
        "calc.py",
        "tests/test_calc.py",
        "conftest.py",
        "sub/conftest.py",
        "helpers.py",
        "README.md",
        "noxfile.py",
        "checks.py",
    ]
    kept = harness_refs.library_files(files, ["tests/**", "conftest.py"], test_code={"helpers.py", "checks.py"})
    assert kept == ["calc.py"]


def test_a_capability_already_used_at_that_place_stays_allowed_and_nowhere_else() -> None:
    lazy = """\
        import sys


        def loaded(name):
            return name in sys.modules


        def add(a, b):
            return a - b
        """
    assert added(lazy.replace("name in sys.modules", "sys.modules.get(name) is not None"), old=lazy) == []
    assert added(lazy.replace("return a - b", "return a + b if 'x' in sys.modules else a - b"), old=lazy) == [
        "sys.modules"
    ]
