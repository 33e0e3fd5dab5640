from luhn import check_digit, is_valid, luhn_checksum


def reference(number):
    digits = [int(c) for c in str(number)][::-1]
    total = 0
    for i, d in enumerate(digits):
        if i % 2:
            d = sum(divmod(2 * d, 10))
        total += d
    return total % 10


def test_against_reference():
    for n in range(10, 5000, 7):
        assert luhn_checksum(n) == reference(n), n


def test_known_numbers():
    for card in ["4111111111111111", "5555555555554444", "378282246310005", "6011111111111117"]:
        assert is_valid(card)


def test_check_digit_makes_valid():
    for partial in ["1", "12", "999", "4111111111111", "5678"]:
        assert is_valid(partial + str(check_digit(partial)))
