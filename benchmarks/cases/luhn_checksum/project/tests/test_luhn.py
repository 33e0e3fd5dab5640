from luhn import check_digit, digits_of, is_valid, mask


def test_digits_of():
    assert digits_of("12 3-4") == [1, 2, 3, 4]


def test_valid_number():
    assert is_valid("4539 1488 0343 6467")


def test_invalid_number():
    assert not is_valid("1234 5678 9012 3456")


def test_check_digit():
    assert check_digit("7992739871") == 3


def test_mask():
    assert mask("4111-1111-1111-1111") == "************1111"
