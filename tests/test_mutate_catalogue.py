"""The operators added to complete the notes' catalogue: what each changes and what it must
leave alone."""

from __future__ import annotations

from explore.generators.mutate.operators import BY_NAME
from test_mutate_operators import changed_lines, mutate


def lines_of(code: str, operator: str, line: int) -> list[str]:
    """The given line (1-based) of every mutant."""
    return [m.splitlines()[line - 1].strip() for m in mutate(code, operator)]


def test_catalogue_is_registered_with_priors_below_the_operator_swaps() -> None:
    for name in (
        "swap_commutative",
        "wrap_call",
        "add_condition",
        "return_literal",
        "sibling_attribute",
        "accumulate",
        "swap_subscripts",
        "swap_keywords",
    ):
        assert BY_NAME[name].prior < BY_NAME["comparison"].prior
    assert BY_NAME["wrap_call"].prior < BY_NAME["insert_statement"].prior  # the widest: last


def test_swap_commutative_string_built_in_the_wrong_order() -> None:
    code = "def f(n):\n    out = ''\n    while n:\n        out = out + D[n % 2]\n    return out\n"
    assert lines_of(code, "swap_commutative", 4) == ["out = D[n % 2] + out"]
    assert changed_lines("x = a and b or c\n", "swap_commutative") == ["x = c or (a and b)", "x = b and a or c"]
    # a number literal makes the swap an equivalent mutant; a string literal is swap_operands' job
    assert changed_lines("y = n + 1\nz = 2 * k\nw = s + '!'\n", "swap_commutative") == []
    assert changed_lines("y = a - b\n", "swap_commutative") == []


def test_wrap_call_uses_callees_in_scope() -> None:
    code = (
        "def g(d, func, default):\n    for k in d:\n        inner[k] = default\n        x = func(d[k])\n    return x\n"
    )
    assert lines_of(code, "wrap_call", 3)[0] == "inner[k] = func(default)"
    assert "return func(x)" in lines_of(code, "wrap_call", 5)
    code = "def area(w, h):\n    return w * h\ndef total(xs):\n    n = len(xs)\n    return xs\n"
    out = lines_of(code, "wrap_call", 5)
    assert out == ["return len(xs)"]  # len is called in the function; area takes two parameters
    assert lines_of("def g(a, b):\n    r = a - b\n    return r\n", "wrap_call", 2) == ["r = max(0, a - b)"]


def test_wrap_call_leaves_alone_targets_callees_recursion_and_module_level() -> None:
    code = "def fact(n):\n    m = abs(n)\n    return fact(m)\n"
    out = mutate(code, "wrap_call")
    assert all("fact(fact" not in o and "abs(abs" not in o and "abs(fact)" not in o for o in out)
    assert all(o.splitlines()[1] == "    m = abs(n)" for o in out)  # n is already abs's argument
    assert mutate("x = len(y)\nz = x\n", "wrap_call") == []  # outside a function: no
    code = "def f(xs):\n    if not xs:\n        raise ValueError(xs)\n    for i in range(xs):\n        y = xs\n    return y\n"
    assert mutate(code, "wrap_call") == []  # classes, exceptions and range transform nothing
    assert all("(d)[" not in o for o in mutate("def h(d):\n    d[0] = str(d)\n", "wrap_call"))


def test_add_condition_guards_a_dereference() -> None:
    code = "def c(s):\n    stack = []\n    for ch in s:\n        if stack.pop() != P[ch]:\n            return False\n    return True\n"
    out = lines_of(code, "add_condition", 4)
    assert out[:2] == [
        "if not stack or stack.pop() != P[ch]:",
        "if stack is None or stack.pop() != P[ch]:",
    ]  # exit first
    assert "if stack and stack.pop() != P[ch]:" in out
    out = lines_of(code.replace("return False", "total += 1"), "add_condition", 4)
    assert out[0] == "if stack and stack.pop() != P[ch]:"  # no early exit: the conjunct first
    assert "if ch is not None and stack.pop() != P[ch]:" in out
    assert "if ch and stack.pop() != P[ch]:" not in out  # ch is read, not dereferenced: no emptiness guard
    out = lines_of("def c(xs, i):\n    while xs[i] > 0 or i:\n        i += 1\n", "add_condition", 2)
    assert out[0] == "while i < len(xs) and (xs[i] > 0 or i):"
    assert mutate("def f(a):\n    x = a[0]\n    return x\n", "add_condition") == []  # not a condition


def test_return_literal_both_ways() -> None:
    code = "def f(xs, t):\n    for i, x in enumerate(xs):\n        if x == t:\n            return i\n    return i\n"
    assert "return -1" in lines_of(code, "return_literal", 5)
    code = "def f(xs, lo):\n    if xs:\n        return -1\n    return lo + 1\n"
    assert lines_of(code, "return_literal", 3)[0] == "return lo + 1"
    # a function with one return never becomes a constant
    assert mutate("def f(a):\n    return a + 1\n", "return_literal") == []


def test_sibling_attribute_from_other_objects_of_the_file() -> None:
    code = "def dur(iv):\n    return iv.end - iv.start\ndef inside(o, i):\n    return o.start <= i.start and i.end <= o.start\n"
    out = lines_of(code, "sibling_attribute", 4)
    assert out == ["return o.end <= i.start and i.end <= o.start", "return o.start <= i.start and i.end <= o.end"]
    code = "def f(self, xs):\n    xs.append(1)\n    return self.box.width + self.box.height + xs.size\n"
    out = lines_of(code, "sibling_attribute", 3)
    assert "return self.box.height + self.box.height + xs.size" in out  # a base that is not a name
    assert not any("append" in o for o in out)  # a method is not a sibling of a data attribute
    code = "def f(s):\n    s.push(1)\n    s.drop(2, 3)\n    return s.pop(4)\n"
    assert [o for o in lines_of(code, "sibling_attribute", 4) if o != "return s.pop(4)"] == [
        "return s.push(4)"
    ]  # a method with as many arguments


def test_accumulate_only_rebinding_inside_a_loop() -> None:
    code = "def f(items):\n    total = 0\n    for it in items:\n        total = it.p * it.q\n    return total\n"
    assert lines_of(code, "accumulate", 4) == ["total += it.p * it.q", "total -= it.p * it.q"]
    assert mutate("def f(xs):\n    for x in xs:\n        y = x\n", "accumulate") == []  # first binding
    assert mutate("def f(t, xs):\n    for x in xs:\n        t = t + x\n", "accumulate") == []
    assert mutate("def f(t, x):\n    t = x\n    return t\n", "accumulate") == []  # not in a loop
    assert lines_of(
        "def f(b, xs):\n    for x in xs:\n        b = []\n        b = 0\n        b = 2\n", "accumulate", 5
    ) == ["b += 2", "b -= 2"]


def test_swap_subscripts_and_far_or_keyword_arguments() -> None:
    assert changed_lines("v = m[i][j]\n", "swap_subscripts") == ["v = m[j][i]"]
    assert changed_lines("v = m[i, j]\n", "swap_subscripts") == ["v = m[j, i]"]
    assert changed_lines("v = m[i][1:]\nw = m[i]\n", "swap_subscripts") == []
    assert changed_lines("v = lerp(t, hi, lo)\n", "swap_keywords") == ["v = lerp(lo, hi, t)"]
    assert changed_lines("v = f(x=a, y=b)\n", "swap_keywords") == ["v = f(x=b, y=a)"]
    assert changed_lines("v = f(a, b)\n", "swap_keywords") == []  # neighbours are swap_args' job


def test_insert_statement_renames_a_sibling_methods_parameters() -> None:
    code = (
        "class W:\n    def receive(self, sku, qty):\n        self.log.append(('receive', sku, qty))\n\n"
        "    def ship(self, item, count):\n        self.level -= count\n"
    )
    out = [o.splitlines()[6].strip() for o in mutate(code, "insert_statement") if len(o.splitlines()) > 6]
    assert "self.log.append(('ship', item, count))" in out
    assert not any("sku" in o or "qty" in o for o in out)  # names not in scope are never inserted
