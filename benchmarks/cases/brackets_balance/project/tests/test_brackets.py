from brackets import is_balanced, max_depth, strip_brackets


def test_balanced():
    assert is_balanced("(a[b]{c})")
    assert is_balanced("")


def test_wrong_order():
    assert not is_balanced("(]")
    assert not is_balanced("((")


def test_closing_first():
    assert not is_balanced(")(")


def test_depth_and_strip():
    assert max_depth("(a(b)[c])") == 2
    assert strip_brackets("f(x[1])") == "fx1"
