from keywords import is_stopword, keywords, tokenize


def test_tokenize():
    assert tokenize("Don't PANIC, it's 42!") == ["don't", "panic", "it's", "42"]


def test_is_stopword():
    assert is_stopword("the")
    assert is_stopword("7")
    assert not is_stopword("python")


def test_keywords():
    assert keywords("The art of computer programming") == ["art", "computer", "programming"]
