import math

from paging import pages


def test_against_ceil():
    for total in range(1, 200):
        for per_page in range(1, 13):
            assert pages(total, per_page) == math.ceil(total / per_page)
