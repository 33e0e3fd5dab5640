from tiers import discount_percent


def test_sweep():
    for t in range(0, 150):
        want = 10 if t >= 100 else 5 if t >= 50 else 0
        assert discount_percent(t) == want
