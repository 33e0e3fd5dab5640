from passwords import has_special, is_strong, problems


def test_strong_password():
    assert is_strong("Tr0ub4dor&3")


def test_too_short():
    assert not is_strong("Ab1!")


def test_missing_upper_case():
    assert not is_strong("abcdefg1!")


def test_has_special():
    assert has_special("a-b")
    assert not has_special("abc")


def test_problems():
    assert problems("abc") == ["too short", "no upper case letter", "no digit", "no symbol"]
