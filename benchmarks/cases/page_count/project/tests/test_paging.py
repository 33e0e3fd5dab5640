from paging import page_label, page_slice, pages


def test_page_slice():
    assert page_slice(list(range(10)), 2, 4) == [4, 5, 6, 7]


def test_empty_has_one_page():
    assert pages(0, 10) == 1


def test_partial_last_page():
    assert pages(11, 5) == 3


def test_exact_multiple():
    assert pages(10, 5) == 2


def test_label():
    assert page_label(1, 20, 10) == "page 1 of 2"
