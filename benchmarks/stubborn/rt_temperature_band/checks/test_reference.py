from weather import band


def test_sweep():
    for tenth in range(-50, 300):
        c = tenth / 10
        want = "freezing" if c < 0 else "cold" if c < 15 else "mild" if c <= 25 else "hot"
        assert band(c) == want, c
