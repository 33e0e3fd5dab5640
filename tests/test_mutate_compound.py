"""The second-tier operators (ops_compound): what each changes and what it must leave alone."""

from __future__ import annotations

from explore.generators.mutate.operators import BY_NAME, REGISTRY
from test_mutate_catalogue import lines_of
from test_mutate_operators import mutate


def test_second_tier_is_registered_below_the_first_tiers_operator_swaps() -> None:
    second = [op for op in REGISTRY if op.tier == 2]
    assert {op.name for op in second} == {
        "compare_constant",
        "step",
        "recursive_argument",
        "loop_condition",
        "slice_iterable",
        "unwrap_call",
        "containerise",
        "insert_call",
    }
    assert all(op.prior < BY_NAME["comparison"].prior and op.doc for op in second)


def test_compare_constant_changes_the_operator_and_its_constant_together() -> None:
    out = lines_of("def f(n):\n    return n == 0\n", "compare_constant", 2)
    assert "return n <= 1" in out and "return n < 1" in out and "return n != 1" in out
    assert len(out) == 5  # one new value each (0 - 1 is no count), never the operator or the constant alone
    assert all(o not in ("return n == 1", "return n <= 0") for o in out)
    assert "if -2 < x:" in lines_of("def g(x):\n    if -1 <= x:\n        pass\n", "compare_constant", 2)
    # not a constant, a chained comparison or a membership test: nothing
    code = "def h(a, b, xs):\n    return a < b, 0 < a < 3, 1 in xs\n"
    assert mutate(code, "compare_constant") == []


def test_step_drops_or_adds_one_inside_a_larger_expression() -> None:
    out = lines_of("def f(n, k):\n    return (n - 1) * 2 ** k\n", "step", 2)
    assert "return (n) * 2 ** k" in out and "return (n - 1) * 2 ** (k - 1)" in out
    assert "return g(n - 1)" in lines_of("def f(n):\n    return g(n)\n", "step", 2)
    assert "return (a + b - 1) // b" in lines_of("def p(a, b):\n    return (a + b) // b\n", "step", 2)
    # left to others: `n - 1` itself (constant), range bounds and indices (bound), plain statements
    code = "def f(n, xs):\n    for i in range(n):\n        xs[i] = n\n    return n\n"
    assert mutate(code, "step") == []
    assert all("+ 1 - 1" not in o for o in mutate("def f(n):\n    return n - 1\n", "step"))


def test_containerise_builds_a_container_from_the_literal_or_a_name() -> None:
    code = "def f(xs, n):\n    if not xs:\n        return []\n    out = []\n    return out\n"
    out = mutate(code, "containerise")
    assert [m.splitlines()[2].strip() for m in out[:3]] == ["return [[]]", "return [xs]", "return [n]"]
    assert [m.splitlines()[3].strip() for m in out[3:]] == ["out = [[]]"]  # not returned: no names
    assert mutate("X = []\ndef f(a):\n    return [a]\n", "containerise") == []  # module level; not empty


def test_loop_condition_uses_a_name_the_loop_reads() -> None:
    code = "def run(jobs):\n    queue = list(jobs)\n    n = 0\n    while True:\n        job = queue.pop()\n        print(n, job)\n"
    assert lines_of(code, "loop_condition", 4) == ["while queue:", "while n:"]  # dereferenced first
    assert mutate(code.replace("while True", "while n < 3"), "loop_condition") == []
    assert mutate("def f(later):\n    while True:\n        later = 1\n", "loop_condition") == []  # nothing bound before


def test_slice_iterable_starts_past_a_prefix_by_a_number_in_scope() -> None:
    code = "def mean(xs, skip=2):\n    name = 'x'\n    for x in xs:\n        print(x, name)\n"
    assert lines_of(code, "slice_iterable", 3) == ["for x in xs[1:]:", "for x in xs[skip:]:"]  # `name` is no number
    assert (
        mutate(
            "def f(xs):\n    for x in range(3):\n        pass\n    for y in xs[2:]:\n        pass\n", "slice_iterable"
        )
        == []
    )


def test_unwrap_call_passes_the_value_through() -> None:
    code = "def f(xs):\n    for x in xs:\n        yield g(x)\n    h(xs)\n    return len(xs) + w(xs + xs) * 2\n"
    out = mutate(code, "unwrap_call")
    assert [o.splitlines()[2].strip() for o in out if "yield x" in o] == ["yield x"]
    assert any("return len(xs) + (xs + xs) * 2" in o for o in out)  # parenthesised where it binds
    assert all("    h(xs)\n" in o for o in out)  # a call statement stays (unwrapping it would delete it)
    assert all("len(xs)" in o for o in out)  # len, range and classes are never unwrapped
    assert mutate("def f(a):\n    return Point(a), float(a, 2)\n", "unwrap_call") == []


def test_recursive_argument_changed_back_or_like_its_neighbour() -> None:
    code = "def f(a, b):\n    if not a:\n        return 0\n    return f(a.rest, b.rest)\n"
    assert lines_of(code, "recursive_argument", 4) == ["return f(a, b.rest)", "return f(a.rest, b)"]
    code = "def g(a, b):\n    return g(a[1:], b)\n"
    assert lines_of(code, "recursive_argument", 2) == ["return g(a, b)", "return g(a[1:], b[1:])"]
    method = "class T:\n    def walk(self, node, depth):\n        return self.walk(node.left, depth + 1)\n"
    assert "return self.walk(node, depth + 1)" in lines_of(method, "recursive_argument", 3)
    assert mutate("def f(a, b):\n    return other(a[1:], b)\n", "recursive_argument") == []  # not a recursive call


def test_insert_call_copies_a_call_of_the_module_with_a_name_from_here() -> None:
    code = (
        "def tags(xs):\n    seen = set()\n    for x in xs:\n        seen.add(x)\n    return seen\n"
        "def words(text):\n    seen = set()\n    out = []\n    for raw in text.split():\n        word = raw.lower()\n"
        "        out.append(word)\n    return out\n"
    )
    after = [
        o.splitlines()[11] for o in mutate(code, "insert_call") if o.splitlines()[10] == "        out.append(word)"
    ]
    assert "        seen.add(word)" in after
    assert "        out.append(word)" not in after  # the statement it follows is not repeated
    # a receiver that is not in scope here is never used
    assert all(
        "seen." not in line
        for o in mutate("def a(seen):\n    seen.add(1)\ndef b(x):\n    y = x\n", "insert_call")
        for line in o.splitlines()[3:]
    )
