from durations import format_duration, parse_duration, split_seconds


def test_split_matches_arithmetic():
    for total in list(range(0, 200)) + [3599, 3600, 3661, 86399, 90061]:
        h, m, s = split_seconds(total)
        assert 0 <= m < 60 and 0 <= s < 60
        assert h * 3600 + m * 60 + s == total


def test_format_minutes_only():
    assert format_duration(125) == "2m 05s"


def test_round_trip():
    assert parse_duration(format_duration(4000).replace(" ", "")) == 4000
