import pytest

from durations import format_duration, parse_duration, split_seconds


def test_split_seconds():
    assert split_seconds(3725) == (1, 2, 5)


def test_format_hours():
    assert format_duration(7322) == "2h 02m 02s"


def test_parse():
    assert parse_duration("1h30m") == 5400
    assert parse_duration("45s") == 45


def test_parse_garbage():
    with pytest.raises(ValueError):
        parse_duration("soon")
