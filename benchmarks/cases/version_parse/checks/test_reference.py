from versions import bump, compare, latest, parse_version


def test_parse_many():
    assert parse_version("0.0.7") == (0, 0, 7)
    assert parse_version("10.20.30") == (10, 20, 30)
    assert parse_version("3.1") == (3, 1, 0)


def test_compare_patch():
    assert compare("1.2.3", "1.2.10") == -1
    assert compare("1.2.4", "1.2.4") == 0


def test_bump_patch():
    assert bump("1.2.3", "patch") == "1.2.4"


def test_latest():
    assert latest(["1.2.9", "1.2.10", "1.1.99"]) == "1.2.10"
