from uniq import first_unique


def test_order():
    words = [f"w{i}" for i in range(30)]
    for i in range(0, 30, 3):
        assert first_unique(words[:i] + words[:i] + words[i:]) == words[i]
