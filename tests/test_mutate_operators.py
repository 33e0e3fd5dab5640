"""Each mutation operator on its own: what it changes, what it must leave alone, and that the
edits are minimal (formatting and comments kept)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from explore.generators.mutate.edits import Source, apply_edits, make_patch, normalise_patch
from explore.generators.mutate.operators import BY_NAME, REGISTRY, get, mutants_in


def mutate(code: str, operator: str) -> list[str]:
    """Every mutated text the operator makes of the snippet."""
    text = textwrap.dedent(code)
    source = Source("m.py", text)
    out = []
    for mutant in mutants_in(source, None, [BY_NAME[operator]]):
        new = apply_edits(text, [e for _, e in mutant.edits])
        ast.parse(new)  # every mutant is valid Python
        out.append(new)
    return out


def changed_lines(code: str, operator: str) -> list[str]:
    """The one line each mutant changes (for single-line snippets)."""
    return [m.strip() for m in mutate(code, operator)]


def test_registry_lists_every_operator_of_the_issue() -> None:
    names = {op.name for op in REGISTRY}
    assert {
        "comparison",
        "arithmetic",
        "augmented",
        "boolean",
        "add_not",
        "remove_not",
        "constant",
        "bound",
        "swap_args",
        "swap_operands",
        "name",
        "return_value",
        "delete_statement",
        "jump",
        "guard",
    } <= names
    assert all(0 < op.prior <= 1 and op.doc for op in REGISTRY)
    with pytest.raises(KeyError, match="choose one of"):
        get("nope")


def test_comparison_swaps_one_operator_and_keeps_formatting() -> None:
    out = changed_lines("ok = a  <  b  # keep\n", "comparison")
    assert "ok = a  <=  b  # keep" in out and "ok = a  >  b  # keep" in out
    assert len(out) == 5
    assert changed_lines("x = a is not None\n", "comparison") == ["x = a is None", "x = a != None"]
    assert changed_lines("x = k not in d\n", "comparison") == ["x = k in d"]
    # chained comparisons: each operator separately
    assert "ok = a < b <= c" in changed_lines("ok = a < b < c\n", "comparison")


def test_comparison_ignores_what_is_not_a_comparison() -> None:
    assert changed_lines("x = a + b\ny = '<'\n", "comparison") == []


def test_arithmetic_and_augmented() -> None:
    out = changed_lines("y = (f - 32) * 5\n", "arithmetic")
    assert "y = (f + 32) * 5" in out and "y = (f - 32) / 5" in out and "y = (f * 32) * 5" in out
    assert "y = x ** 2" in changed_lines("y = x * 2\n", "arithmetic")
    assert changed_lines("t += v\n", "augmented") == ["t -= v", "t *= v", "t = v"]
    assert changed_lines("t = v\n", "augmented") == []


def test_boolean_swaps_one_connective() -> None:
    assert changed_lines("ok = a and b or c\n", "boolean") == ["ok = a and b and c", "ok = a or b or c"]


def test_add_not_only_on_conditions() -> None:
    out = mutate("if ready and count:\n    go()\n", "add_not")
    assert "if not (ready and count):\n    go()\n" in out
    assert "if not ready and count:\n    go()\n" in out
    assert mutate("x = ready\n", "add_not") == []  # not a condition


def test_remove_not() -> None:
    assert changed_lines("if not (a or b): pass\n", "remove_not") == ["if (a or b): pass"]
    assert changed_lines("x = -a\n", "remove_not") == []


def test_constant_plus_minus_one_and_booleans() -> None:
    assert changed_lines("n = 10\n", "constant") == ["n = 11", "n = 9"]
    assert changed_lines("n = 0\n", "constant") == ["n = 1"]
    assert changed_lines("flag = True\n", "constant") == ["flag = False"]
    assert changed_lines("s = 'ab'\nf = 1.5\n", "constant") == []  # strings and floats: no
    assert changed_lines("n += 1\n", "constant") == []  # a counter's step: no


def test_bound_on_range_slice_and_index_not_literals() -> None:
    assert changed_lines("for i in range(1, n): pass\n", "bound") == [
        "for i in range(1, n + 1): pass",
        "for i in range(1, n - 1): pass",
    ]
    assert changed_lines("y = s[a:b]\n", "bound") == [
        "y = s[a + 1:b]",
        "y = s[a - 1:b]",
        "y = s[a:b + 1]",
        "y = s[a:b - 1]",
    ]
    assert changed_lines("y = m[n - i]\n", "bound") == ["y = m[n - i + 1]", "y = m[n - i - 1]"]
    assert changed_lines("y = s[1]\nz = f(n)\n", "bound") == []


def test_swap_args_and_operands() -> None:
    assert changed_lines("q = divmod(60, minutes)\n", "swap_args") == ["q = divmod(minutes, 60)"]
    assert changed_lines("f(a)\ng(*a, b)\n", "swap_args") == []
    assert changed_lines("y = (a + b) - c\n", "swap_operands") == ["y = (c) - (a + b)"]
    assert changed_lines("y = a + b\n", "swap_operands") == []  # commutative: no
    assert changed_lines("y = k in d\n", "swap_operands") == ["y = d in k"]


def test_name_replaces_with_same_role_in_scope() -> None:
    code = """\
    def f(items, key):
        seen = set()
        for item in items:
            marker = key(item)
            seen.add(item)
        return seen
    """
    out = mutate(code, "name")
    assert any("seen.add(marker)" in o for o in out)
    # never a name bound later (it would be unbound), never a function where a value goes
    assert not any("seen = marker" in o for o in out)
    assert not any("seen.add(f)" in o for o in out)
    assert not any("a - a" in o for o in mutate("def g(a, b):\n    c = a - b\n    return c + a\n", "name"))
    # calls: a function of the same shape
    assert "x = max(a, b)" in changed_lines("x = min(a, b)\n", "name")
    assert "ok = s.endswith(p)" in changed_lines("ok = s.startswith(p)\n", "name")


def test_name_keeps_the_only_use_of_a_parameter() -> None:
    out = mutate("def f(a, b):\n    return a + b\n", "name")
    assert out == []


def test_return_value() -> None:
    code = "def best_run(xs):\n    best = current = 0\n    for x in xs:\n        current += x\n    return current\n"
    out = mutate(code, "return_value")
    assert any(o.endswith("return best\n") for o in out)
    assert not any("return 0" in o or "return None" in o for o in out)  # never a constant


def test_delete_statement() -> None:
    code = "def f(out):\n    out.sort()  # stray\n    return out\n"
    out = mutate(code, "delete_statement")
    assert "def f(out):\n    return out\n" in out
    only = mutate("def g(x):\n    if x:\n        x.clear()\n    return x\n", "delete_statement")
    assert "def g(x):\n    if x:\n        pass\n    return x\n" in only
    assert mutate("import os\nX = 1\n", "delete_statement") == []  # module level: no


def test_jump_swaps() -> None:
    code = "def f(xs):\n    for x in xs:\n        if x:\n            break\n        continue\n"
    out = mutate(code, "jump")
    assert any("            continue\n        continue" in o for o in out)
    assert any("            break\n        break" in o for o in out)


def test_guard_wraps_a_statement() -> None:
    code = "def f(d):\n    total = len(d)\n    return total\n"
    out = mutate(code, "guard")
    assert "def f(d):\n    if d is not None:\n        total = len(d)\n    return total\n" in out
    assert "def f(d):\n    if d:\n        total = len(d)\n    return total\n" in out


def test_division_guard() -> None:
    assert changed_lines("m = s / n\n", "division_guard") == ["m = (s / n if n else 0)"]


def test_insert_statement_copies_with_analogous_names() -> None:
    code = """\
    def merge(left, right):
        out = []
        i = j = 0
        while i < len(left) and j < len(right):
            if left[i] <= right[j]:
                out.append(left[i])
                i += 1
            else:
                j += 1
        out.extend(left[i:])
        return out
    """
    out = mutate(code, "insert_statement")
    assert any("    out.extend(left[i:])\n    out.extend(right[j:])\n    return out\n" in o for o in out)


def test_docstrings_annotations_and_decorators_are_left_alone() -> None:
    code = '''\
    @cache(1)
    def f(x: int = 1) -> int:
        """Returns 1 < 2."""
        return x
    '''
    text = textwrap.dedent(code)
    for mutant in mutants_in(Source("m.py", text)):
        new = apply_edits(text, [e for _, e in mutant.edits])
        assert '"""Returns 1 < 2."""' in new and "@cache(1)" in new and "x: int" in new and "-> int" in new


def test_lines_filter_and_patch_shape() -> None:
    text = "a = 1\nb = 2\n"
    source = Source("pkg/m.py", text)
    mutants = mutants_in(source, [2])
    assert mutants and all(m.line == 2 for m in mutants)
    patch = make_patch(mutants[0], {"pkg/m.py": text})
    assert patch.startswith("diff --git a/pkg/m.py b/pkg/m.py\n--- a/pkg/m.py\n+++ b/pkg/m.py\n")
    assert "-b = 2\n+b = 3\n" in patch
    assert normalise_patch(patch) == normalise_patch(patch.replace("@@ -1,2 +1,2 @@", "@@ -1,2 +1,2 @@ ctx"))


def test_patch_of_a_file_without_final_newline() -> None:
    text = "x = 1"
    mutant = mutants_in(Source("m.py", text), None, [BY_NAME["constant"]])[0]
    assert make_patch(mutant, {"m.py": text}).endswith("+x = 2\n\\ No newline at end of file\n")


def test_lambdas_and_unused_parameters() -> None:
    code = "def parse(text, default=None):\n    key = lambda x: (x, 1)\n    try:\n        return int(text)\n    except ValueError:\n        return text\n"
    out = mutate(code, "return_value")
    assert any(o.endswith("        return default\n") for o in out)  # the unused parameter is a candidate
    assert mutate("f = lambda a, b: a - b\n", "arithmetic") == ["f = lambda a, b: a + b\n", "f = lambda a, b: a * b\n"]
