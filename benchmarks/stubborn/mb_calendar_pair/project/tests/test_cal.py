from cal import day_of_year, days_in_month, is_leap, quarter


def test_leap_ordinary():
    assert is_leap(2024)


def test_not_leap():
    assert not is_leap(2023)


def test_quarter():
    assert [quarter(m) for m in (1, 4, 7, 12)] == [1, 2, 3, 4]


def test_days_in_month():
    assert days_in_month(2023, 4) == 30


def test_day_of_year():
    assert day_of_year(2023, 3, 1) == 60
