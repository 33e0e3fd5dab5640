from windows import windows


def test_count():
    for n in range(0, 8):
        for size in range(1, 5):
            xs = list(range(n))
            assert windows(xs, size) == [xs[i:i + size] for i in range(max(0, n - size + 1))]
