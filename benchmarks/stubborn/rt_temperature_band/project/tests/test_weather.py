from weather import band, bands, warmest


def test_zero_is_cold():
    assert band(0) == "cold"


def test_half_below_zero_freezes():
    assert band(-0.5) == "freezing"


def test_tenth_below_zero_freezes():
    assert bands([-0.1, 30]) == ["freezing", "hot"]


def test_mild():
    assert band(20) == "mild"


def test_warmest():
    assert warmest([1, 5, 2]) == 5
