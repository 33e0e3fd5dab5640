"""Suspiciousness formulas of spectrum-based fault localisation (pure): a line's score from how many
failing and passing tests ran it (ef, ep) and did not (nf, np). Named by localise.py as before."""

from __future__ import annotations

import math
from collections.abc import Callable


def ochiai(ef: int, ep: int, nf: int, np_: int) -> float:
    denominator = math.sqrt((ef + nf) * (ef + ep))
    return ef / denominator if denominator else 0.0


def dstar(ef: int, ep: int, nf: int, np_: int, star: int = 2) -> float:
    """ef^* / (ep + nf); a perfect line (ep = nf = 0) reads the denominator as 0.5, so it ranks
    above every imperfect one yet stays finite."""
    if ef == 0:
        return 0.0
    return float(ef**star) / ((ep + nf) or 0.5)


def tarantula(ef: int, ep: int, nf: int, np_: int) -> float:
    failed, passed = ef + nf, ep + np_
    fail_ratio = ef / failed if failed else 0.0
    pass_ratio = ep / passed if passed else 0.0
    return fail_ratio / (fail_ratio + pass_ratio) if fail_ratio else 0.0


FORMULAS: dict[str, Callable[[int, int, int, int], float]] = {"ochiai": ochiai, "dstar": dstar, "tarantula": tarantula}
DEFAULT_FORMULA = "ochiai"
