from words import unique_tags, unique_words, word_count


def test_unique_tags():
    assert unique_tags(["a", "b", "a", "c", "b"]) == ["a", "b", "c"]


def test_word_count():
    assert word_count("one, two ... three") == 3


def test_distinct_words():
    assert unique_words("red green blue") == ["1. red", "2. green", "3. blue"]


def test_repeated_words_once():
    assert unique_words("The cat saw the other cat.") == ["1. the", "2. cat", "3. saw", "4. other"]
