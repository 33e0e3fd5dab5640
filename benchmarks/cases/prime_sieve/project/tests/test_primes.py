from primes import is_prime, prime_factors, sieve


def test_sieve_small():
    assert sieve(1) == []
    assert sieve(2) == [2]


def test_sieve_thirty():
    assert sieve(30) == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]


def test_is_prime():
    assert is_prime(97)
    assert not is_prime(91)


def test_prime_factors():
    assert prime_factors(360) == [2, 2, 2, 3, 3, 5]
