from modes import mode


def test_ties_first_seen():
    for n in range(2, 12):
        xs = [f"v{i}" for i in range(n)] * 2
        assert mode(xs) == "v0"
        ys = list(range(n, 0, -1)) * 2
        assert mode(ys) == n
