from shipping import shipping


def test_sweep():
    for cents in range(4000, 6000, 25):
        total = cents / 100
        assert shipping(total) == (0 if total >= 50 else 5)
        assert shipping(total, True) == (0 if total >= 50 else 10)
