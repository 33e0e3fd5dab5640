from keywords import keywords, top_keywords


def test_all_stopwords():
    assert keywords("it is a 2 of the") == []


def test_top_keywords():
    text = "cats and dogs; cats with hats; the dogs of cats"
    assert top_keywords(text, 2) == ["cats", "dogs"]


def test_order_preserved():
    assert keywords("zeta alpha in beta") == ["zeta", "alpha", "beta"]
