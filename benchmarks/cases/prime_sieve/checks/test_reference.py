from primes import is_prime, sieve


def test_matches_trial_division():
    for limit in (4, 9, 25, 49, 50, 121, 500):
        assert sieve(limit) == [n for n in range(limit + 1) if is_prime(n)], limit


def test_perfect_square_limit():
    assert 49 not in sieve(49)
    assert sieve(4) == [2, 3]
