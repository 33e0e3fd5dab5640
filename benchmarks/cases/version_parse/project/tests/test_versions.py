import pytest

from versions import bump, compare, parse_version


def test_parse_full():
    assert parse_version("1.2.3") == (1, 2, 3)


def test_parse_short():
    assert parse_version("v2") == (2, 0, 0)


def test_compare_minor():
    assert compare("1.2.0", "1.10.0") == -1


def test_bump_major():
    assert bump("1.4.2", "major") == "2.0.0"


def test_bump_unknown():
    with pytest.raises(ValueError):
        bump("1.0.0", "micro")
