import random

from words import unique_words


def test_random_texts():
    rng = random.Random(2)
    vocabulary = ["a", "b", "c", "d", "e", "f"]
    for _ in range(200):
        text = " ".join(rng.choice(vocabulary) + rng.choice(["", ",", "."]) for _ in range(rng.randint(0, 12)))
        want = [f"{i}. {w}" for i, w in enumerate(dict.fromkeys(w.strip(",.") for w in text.split()), start=1)]
        assert unique_words(text) == want
