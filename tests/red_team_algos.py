"""A red team for the exact replay (``algorithms.replay``): small mechanisms
written the way people write Python, each one exercising an edge of a
tracer that runs the code on chosen uniform draws — thresholds that are
``Fraction``/``Decimal``/``np.longdouble``/``np.float32`` numbers or doubles
off the 2^-53 grid, fixed-width integers that wrap around, bit operations,
``%`` and ``//`` (negative operands too), rejection loops, draws whose
number depends on the input or on earlier draws, Python's ``random``
module, early returns, generators built inside the code, a stream class,
and numpy scalars in and out.

``CORRECT`` names the correct programs, ``BUGGY`` their buggy twins.  Each
has ``claim_epsilon`` (its claim), ``true_epsilon`` (its exact pure-DP ε,
derived in its docstring, for the laws of the real generators: ``random()``
is k/2^53 with k uniform on [0, 2^53), ``integers``/``randint``/
``randrange``/``choice`` are exactly uniform), ``horizon`` (the T to audit
it at) and, for the twins, ``buggy = True``.  The neighbouring relation is
the default one: one of the T input values in [0, 1] changes anywhere in
[0, 1], so the bit ``x ≥ 1/2`` (and a category ``round(2x)`` in {0, 1, 2})
of that value may take any value.  Where the ε of a correct program is
its ideal value shifted by the 2^-53 grid (or by float32 rounding), the
docstring says by how much; a claim always sits at or above the true ε.

N below is 2^53.
"""
from __future__ import annotations

import decimal
import math
import random
from decimal import Decimal
from fractions import Fraction

import numpy as np

N = 2 ** 53
INF = math.inf


def _ln(ratio) -> float:
    """ln of an exact rational ``ratio``, correctly rounded to a float."""
    r = Fraction(ratio)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        return float(Decimal(r.numerator).ln() - Decimal(r.denominator).ln())


def _declare(fn, claim, true, horizon=1, buggy=False):
    fn.claim_epsilon = claim
    fn.true_epsilon = true
    fn.horizon = horizon
    if buggy:
        fn.buggy = True
    return fn


# ====================================================== 1. exact thresholds
def rr_fraction(x, rng):
    """Randomized response, the truth iff ``u < Fraction(2, 3)``.  The
    comparison of a double with a Fraction is exact: k/N < 2/3 iff
    3k < 2^54, and 2^54 ≡ 1 (mod 3), so k ≤ (2^54 − 1)/3: (2^54 + 2)/3
    values of k: P(truth) = (2^54 + 2)/(3N),
    P(lie) = (N − 2)/(3N), and ε = ln((2^54 + 2)/(N − 2)) = ln 2 + 3.3e-16."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < Fraction(2, 3) else 1 - bit


def rr_decimal(x, rng):
    """The same with ``Decimal(2) / Decimal(3)`` = 0.666…667 (28 digits), a
    hair above 2/3 (by 3e-29, far less than 2^-53): a double compares with
    a Decimal exactly, and the same (2^54 + 2)/3 values of k lie below it.
    ε = ln((2^54 + 2)/(N − 2)) = ln 2 + 3.3e-16."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < Decimal(2) / Decimal(3) else 1 - bit


def rr_longdouble(x, rng):
    """The same with ``np.longdouble(2) / 3``: on x86-64 an 80-bit float,
    2/3 rounded up to (2^65 + 1)/(3·2^64) (2^65 ≡ 2 mod 3), less than 2^-60
    above 2/3; the double is promoted exactly, and again (2^54 + 2)/3
    values of k lie below.  ε = ln((2^54 + 2)/(N − 2)) = ln 2 + 3.3e-16
    (where long double is a double, the threshold is fl(2/3) and ε is
    ``rr_float64_scalar``'s)."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < np.longdouble(2) / 3 else 1 - bit


def rr_float64_scalar(x, rng):
    """The same with a numpy scalar ``np.float64(2) / np.float64(3)`` =
    fl(2/3) = (2^54 − 1)/(3N) (rounded down: 2^54/3 has fraction 1/3), on
    the grid: exactly (2^54 − 1)/3 values of k lie below it, one fewer than
    below the Fraction 2/3.  P(lie) = (N + 1)/(3N), and
    ε = ln((2^54 − 1)/(N + 1)) = ln 2 − 1.7e-16."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < np.float64(2) / np.float64(3) else 1 - bit


def rr_float32_threshold(x, rng):
    """The same with ``np.float32(2 / 3)`` = t = 11184811/2^24 (2^25/3 =
    11184810.67 rounds up).  ``rng.random()`` is a Python float, and under
    NumPy ≥ 2 (NEP 50) a Python float meeting a float32 is cast to float32:
    the comparison is float32(u) < t, not u < t.  float32(u) < t iff u is
    at most the midpoint t − 2^-25 to the float32 below (a tie rounds to
    that neighbour, whose mantissa is even): k ≤ 22369621·2^28, so
    P(truth) = (22369621·2^28 + 1)/N, P(lie) = (11184811·2^28 − 1)/N, and
    ε = ln((22369621·2^28 + 1)/(11184811·2^28 − 1)) = ln 2 − 4.5e-8 (a
    comparison in float64 would give ln(11184811/5592405) = ln 2 + 8.9e-8)."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < np.float32(2 / 3) else 1 - bit


def rr_exact_double(x, rng):
    """A threshold that is exactly a double on the grid, 0.75: P(truth) =
    3/4 exactly, ε = ln 3."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < 0.75 else 1 - bit


def rr_seven_tenths_double(x, rng):
    """A threshold that is a double but not 7/10: fl(0.7) =
    6305039478318694/N (0.7·N = …694.4 rounds down), on the grid, so
    P(truth) = 6305039478318694/N and ε = ln(6305039478318694/
    2702159776422298) = ln(7/3) − 2.1e-16."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < 0.7 else 1 - bit


def rr_seven_tenths_fraction(x, rng):
    """The same against ``Fraction(7, 10)``, not a double: k/N < 7/10 for
    k ≤ 6305039478318694, one more k than below fl(0.7):
    ε = ln(6305039478318695/2702159776422297) = ln(7/3) + 3.2e-16."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < Fraction(7, 10) else 1 - bit


def rr_rare_lie(x, rng):
    """Lies iff ``u < 0.1``: fl(0.1) = 3602879701896397/2^55 is off the 2^-53
    grid (its ulp is 2^-56); k/N < fl(0.1) iff 4k < 3602879701896397, i.e.
    k ≤ 900719925474099: P(lie) = 900719925474100/N, a little above 1/10,
    and ε = ln(8106479329266892/900719925474100) = ln 9 − 9.9e-16."""
    bit = int(x[0] >= 0.5)
    if rng.random() < 0.1:
        return 1 - bit
    return bit


_declare(rr_fraction, 0.7, _ln(Fraction(2 ** 54 + 2, N - 2)))
_declare(rr_decimal, 0.7, _ln(Fraction(2 ** 54 + 2, N - 2)))
_declare(rr_longdouble, 0.7, _ln(Fraction(2 ** 54 + 2, N - 2)))
_declare(rr_float64_scalar, 0.7, _ln(Fraction(2 ** 54 - 1, N + 1)))
_declare(rr_float32_threshold, 0.7,
         _ln(Fraction(22369621 * 2 ** 28 + 1, 11184811 * 2 ** 28 - 1)))
_declare(rr_exact_double, 1.1, _ln(3))
_declare(rr_seven_tenths_double, 0.85, _ln(Fraction(6305039478318694, 2702159776422298)))
_declare(rr_seven_tenths_fraction, 0.85, _ln(Fraction(6305039478318695, 2702159776422297)))
_declare(rr_rare_lie, 2.2, _ln(Fraction(8106479329266892, 900719925474100)))


def buggy_rr_fraction(x, rng):
    """``rr_fraction`` telling the truth with probability ``Fraction(9, 10)``
    under the same ln 2 claim: k/N < 9/10 for k ≤ 8106479329266892 (0.9·N =
    …892.8), so P(lie) = 900719925474099/N and
    ε = ln(8106479329266893/900719925474099) = ln 9 + 2.5e-16 = 2.197."""
    bit = int(x[0] >= 0.5)
    return bit if rng.random() < Fraction(9, 10) else 1 - bit


_declare(buggy_rr_fraction, 0.7, _ln(Fraction(8106479329266893, 900719925474099)),
         buggy=True)


# ================================================ 2. integers that wrap around
def byte_pad(x, rng):
    """A one-time pad on a byte: a uniform uint8 key plus the bit, wrapping
    mod 256 (255 + 1 = 0).  key ↦ key + b is a bijection of Z/256, so the
    output (an ``np.uint8``) is uniform on 0..255 whatever the bit: ε = 0."""
    bit = int(x[0] >= 0.5)
    key = rng.integers(0, 256, dtype=np.uint8)
    with np.errstate(over="ignore"):      # the wrap-around is the point
        return key + np.uint8(bit)


def buggy_byte_pad(x, rng):
    """The pad with ``integers(0, 255)``: the key is never 255, so with bit
    0 the output is 0..254 and with bit 1 it is 1..255: 255 (and 0) betray
    the bit, ε = ∞."""
    bit = int(x[0] >= 0.5)
    key = rng.integers(0, 255, dtype=np.uint8)
    with np.errstate(over="ignore"):
        return key + np.uint8(bit)


def int8_negation(x, rng):
    """A uniform int8, negated when the bit is 1.  Negation is a bijection
    of int8 (−(−128) wraps to −128), so the output is uniform on
    −128..127 either way: ε = 0."""
    bit = int(x[0] >= 0.5)
    v = rng.integers(-128, 128, size=1, dtype=np.int8)
    return int((-v if bit else v)[0])


def buggy_int8_negation(x, rng):
    """The draw ``integers(-128, 127)`` never gives 127: with bit 0 the
    output is −128..126, with bit 1 it is −126..127 and −128 (from −128):
    127 is seen only with bit 1 (−127 only with bit 0), ε = ∞."""
    bit = int(x[0] >= 0.5)
    v = rng.integers(-128, 127, size=1, dtype=np.int8)
    return int((-v if bit else v)[0])


def uint16_wrap_shift(x, rng):
    """A uint16 word d·4096 + 4096·b (d uniform on 0..15) that wraps at
    65536, then ``>> 12``: the output is (d + b) mod 16, uniform on 0..15
    for either bit: ε = 0."""
    bit = int(x[0] >= 0.5)
    d = rng.integers(0, 16, dtype=np.uint16)
    with np.errstate(over="ignore"):
        word = d * np.uint16(4096) + np.uint16(4096 * bit)
    return int(word >> 12)


def buggy_uint16_wrap_shift(x, rng):
    """d uniform on 0..14 only: (d + b) mod 16 is 0..14 with bit 0 and
    1..15 with bit 1, ε = ∞."""
    bit = int(x[0] >= 0.5)
    d = rng.integers(0, 15, dtype=np.uint16)
    with np.errstate(over="ignore"):
        word = d * np.uint16(4096) + np.uint16(4096 * bit)
    return int(word >> 12)


def uint16_counter_pad(x, rng):
    """Over T = 3 values: the count of values ≥ 1/2 as a uint16, padded with
    a uniform uint16 key (mod 2^16): the output (an ``np.uint16``) is
    uniform on 0..65535 whatever the count: ε = 0."""
    count = np.uint16(np.sum(x >= 0.5))
    key = rng.integers(0, 2 ** 16, dtype=np.uint16)
    with np.errstate(over="ignore"):
        return key + count


_declare(byte_pad, 0.1, 0.0)
_declare(buggy_byte_pad, 0.1, INF, buggy=True)
_declare(int8_negation, 0.1, 0.0)
_declare(buggy_int8_negation, 0.1, INF, buggy=True)
_declare(uint16_wrap_shift, 0.1, 0.0)
_declare(buggy_uint16_wrap_shift, 0.1, INF, buggy=True)
_declare(uint16_counter_pad, 0.1, 0.0, horizon=3)


# ===================================================== 3. bit operations
def byte_parity_pad(x, rng):
    """The parity of a uniform byte, counted bit by bit (a loop whose length
    is the draw's bit length), XOR the bit.  Of the 256 bytes 128 have odd
    parity, so the parity is a fair coin and the output is uniform on
    {0, 1}: ε = 0."""
    bit = int(x[0] >= 0.5)
    byte = rng.integers(0, 256)
    parity = 0
    while byte:
        parity ^= int(byte & 1)
        byte >>= 1
    return parity ^ bit


def buggy_byte_parity_pad(x, rng):
    """The "byte" drawn from ``integers(0, 3)``: parities 0, 1, 1, so
    P(parity 1) = 2/3 and the output is 1 − b with probability 2/3:
    ε = ln 2."""
    bit = int(x[0] >= 0.5)
    byte = rng.integers(0, 3)
    parity = 0
    while byte:
        parity ^= int(byte & 1)
        byte >>= 1
    return parity ^ bit


def or_coin_rr(x, rng):
    """``(d | 2) - 2`` for d uniform on 0..3 is d's low bit, a fair coin:
    heads tells the truth, tails answers a second fair coin
    (``integers(0, 2)``, drawn only then).  P(truth) = 1/2 + 1/4 = 3/4:
    ε = ln 3."""
    bit = int(x[0] >= 0.5)
    if (rng.integers(0, 4) | 2) - 2:
        return bit
    return bit ^ int(rng.integers(0, 2))


def invert_mod4(x, rng):
    """``~d`` = −d − 1 for d uniform on 0..3; (−d − 1 + b) mod 4 is uniform
    on 0..3 for either bit (a shift of Z/4): ε = 0."""
    bit = int(x[0] >= 0.5)
    return int((~rng.integers(0, 4) + bit) % 4)


def buggy_invert_mod4(x, rng):
    """Reduced mod 3 where 4 was meant: (−d − 1) mod 3 over d = 0..3 is
    2, 1, 0, 2 (bit 0) and (−d) mod 3 is 0, 2, 1, 0 (bit 1): the output 2
    has probability 1/2 against 1/4, ε = ln 2."""
    bit = int(x[0] >= 0.5)
    return int((~rng.integers(0, 4) + bit) % 3)


def masked_rr(x, rng):
    """A masked draw as the coin: ``r & 0b1100`` for r uniform on 0..15 is
    zero for r = 0..3 only, so P(truth) = 12/16 = 3/4: ε = ln 3."""
    bit = int(x[0] >= 0.5)
    if rng.integers(0, 16) & 0b1100:
        return bit
    return 1 - bit


def buggy_masked_rr(x, rng):
    """The mask one bit too wide, ``0b1110``: zero for r ∈ {0, 1} only, so
    P(truth) = 14/16, ε = ln 7."""
    bit = int(x[0] >= 0.5)
    if rng.integers(0, 16) & 0b1110:
        return bit
    return 1 - bit


def shift_pack_rr(x, rng):
    """r uniform on 0..31: ``r >> 3`` (bits 3–4) is non-zero with
    probability 3/4 and decides the truth; the answer is packed with r's
    low bit (independent of bits 3–4, a fair coin) as
    ``(answer << 1) | (r & 1)``.  The code's law is RR with P(truth) = 3/4
    times a fair coin: ε = ln 3."""
    bit = int(x[0] >= 0.5)
    r = rng.integers(0, 32)
    answer = bit if r >> 3 else 1 - bit
    return int((answer << 1) | (r & 1))


def buggy_shift_pack_rr(x, rng):
    """``r >> 2`` (bits 2–4) is non-zero with probability 7/8 (and still
    independent of the low bit): ε = ln 7."""
    bit = int(x[0] >= 0.5)
    r = rng.integers(0, 32)
    answer = bit if r >> 2 else 1 - bit
    return int((answer << 1) | (r & 1))


_declare(byte_parity_pad, 0.1, 0.0)
_declare(buggy_byte_parity_pad, 0.1, _ln(2), buggy=True)
_declare(or_coin_rr, 1.1, _ln(3))
_declare(invert_mod4, 0.1, 0.0)
_declare(buggy_invert_mod4, 0.1, _ln(2), buggy=True)
_declare(masked_rr, 1.1, _ln(3))
_declare(buggy_masked_rr, 1.1, _ln(7), buggy=True)
_declare(shift_pack_rr, 1.1, _ln(3))
_declare(buggy_shift_pack_rr, 1.1, _ln(7), buggy=True)


# ================================================================ 4. % and //
def mod_shift3(x, rng):
    """(d + b) mod 3 for d uniform on 0..5: each residue twice, for either
    bit: uniform on {0, 1, 2}, ε = 0."""
    bit = int(x[0] >= 0.5)
    return int((rng.integers(0, 6) + bit) % 3)


def buggy_mod_shift3(x, rng):
    """d uniform on 0..4 (five values): residues of d are 0, 1, 2, 0, 1, so
    (d + b) mod 3 puts 2/5 on b and b + 1 and 1/5 on b + 2: the output 0
    has 2/5 (bit 0) against 1/5 (bit 1), ε = ln 2."""
    bit = int(x[0] >= 0.5)
    return int((rng.integers(0, 5) + bit) % 3)


def negative_mod(x, rng):
    """(d − b) mod 3 for d uniform on −5..0, with Python's (floor) modulo
    of negative numbers: six consecutive integers, each residue twice,
    for either bit: ε = 0."""
    bit = int(x[0] >= 0.5)
    return int((rng.integers(-5, 1) - bit) % 3)


def buggy_negative_mod(x, rng):
    """d uniform on −5..−1 (five values): d mod 3 is 1, 2, 0, 1, 2 and
    (d − 1) mod 3 is 0, 1, 2, 0, 1: the output 0 has 1/5 against 2/5,
    ε = ln 2."""
    bit = int(x[0] >= 0.5)
    return int((rng.integers(-5, 0) - bit) % 3)


def floordiv_rr(x, rng):
    """``d // 4`` for d uniform on 0..9 is 0, 1 (four values each) or 2
    (two): the truth iff it is below 2, P(truth) = 8/10: ε = ln 4."""
    bit = int(x[0] >= 0.5)
    if rng.integers(0, 10) // 4 < 2:
        return bit
    return 1 - bit


def buggy_floordiv_rr(x, rng):
    """Divided by 3: ``d // 3`` is 0, 1, 2 (three values each) or 3 (d = 9),
    so the truth has probability 9/10: ε = ln 9."""
    bit = int(x[0] >= 0.5)
    if rng.integers(0, 10) // 3 < 3:
        return bit
    return 1 - bit


_declare(mod_shift3, 0.1, 0.0)
_declare(buggy_mod_shift3, 0.1, _ln(2), buggy=True)
_declare(negative_mod, 0.1, 0.0)
_declare(buggy_negative_mod, 0.1, _ln(2), buggy=True)
_declare(floordiv_rr, 1.4, _ln(4))
_declare(buggy_floordiv_rr, 1.4, _ln(9), buggy=True)


# ========================================================= 5. rejection loops
def rejection_krr(x, rng):
    """3-ary randomized response on the category c = round(2x) ∈ {0, 1, 2}:
    draw d from 0..7 until d < 6 (then d is uniform on 0..5), shift c by
    s = max(d − 3, 0) mod 3: s = 0 with probability 4/6, 1 and 2 with 1/6
    each.  P_c(y) is 2/3 for y = c and 1/6 otherwise, for every c:
    ε = ln((2/3)/(1/6)) = ln 4."""
    c = int(round(float(x[0]) * 2))
    while True:
        d = rng.integers(0, 8)
        if d < 6:
            break
    return int((c + max(d - 3, 0)) % 3)


def buggy_rejection_krr(x, rng):
    """Rejects only 7 (``d < 7``): d is uniform on 0..6 and s = 3 (d = 6)
    is the truth again: P_c(c) = 5/7, the others 1/7: ε = ln 5."""
    c = int(round(float(x[0]) * 2))
    while True:
        d = rng.integers(0, 8)
        if d < 7:
            break
    return int((c + max(d - 3, 0)) % 3)


def rejection_uniform_rr(x, rng):
    """Draws u until u < 0.75, then tells the truth iff u < 0.5.  The kept
    u is uniform on the 3·2^51 grid points below 0.75, 2^52 of them below
    0.5: P(truth) = 2/3 exactly, ε = ln 2."""
    bit = int(x[0] >= 0.5)
    u = rng.random()
    while u >= 0.75:
        u = rng.random()
    return bit if u < 0.5 else 1 - bit


_declare(rejection_krr, 1.4, _ln(4))
_declare(buggy_rejection_krr, 1.4, _ln(5), buggy=True)
_declare(rejection_uniform_rr, 0.7, _ln(2))


# ============================================ 6. draws whose number depends on the input
def or_reroll(x, rng):
    """With bit 1 two chances at a fair coin (``or`` short-circuits: the
    second draw happens only when the first fails): P(1) = 3/4; with bit 0
    one chance, P(1) = 1/2.  Ratios 3/2 (output 1) and 2 (output 0):
    ε = ln 2."""
    bit = int(x[0] >= 0.5)
    if bit:
        return int(rng.random() < 0.5 or rng.random() < 0.5)
    return int(rng.random() < 0.5)


def buggy_or_reroll(x, rng):
    """Three chances with bit 1: P(1) = 7/8, P(0) = 1/8 against 1/2:
    ε = ln 4."""
    bit = int(x[0] >= 0.5)
    if bit:
        return int(rng.random() < 0.5 or rng.random() < 0.5 or rng.random() < 0.5)
    return int(rng.random() < 0.5)


def max_reroll(x, rng):
    """d uniform on 0..3, rerolled once (keeping the larger) when the bit is
    1: P(max = k) = (2k + 1)/16 against 1/4: the ratios are 1/4, 3/4, 5/4
    and 7/4, ε = ln 4."""
    bit = int(x[0] >= 0.5)
    d = rng.integers(0, 4)
    if bit:
        d = max(d, rng.integers(0, 4))
    return int(d)


def buggy_max_reroll(x, rng):
    """Rerolled twice: P(max = 0) = 1/64 against 1/4, ε = ln 16 (the other
    side: P(max = 3) = 37/64, ratio 37/16)."""
    bit = int(x[0] >= 0.5)
    d = rng.integers(0, 4)
    if bit:
        for _ in range(2):
            d = max(d, rng.integers(0, 4))
    return int(d)


_declare(or_reroll, 0.7, _ln(2))
_declare(buggy_or_reroll, 0.7, _ln(4), buggy=True)
_declare(max_reroll, 1.4, _ln(4))
_declare(buggy_max_reroll, 1.4, _ln(16), buggy=True)


# ======================================================= 7. Python's random module
def choices_rr(x):
    """``random.choices`` with weights [2, 1]: it draws u and returns the
    first index whose cumulative weight exceeds fl(3u), so the truth iff
    fl(3k/N) < 2.  3k is exact below N; above, it rounds to even, and
    fl(3k) reaches 2^54 from 3k = 2^54 − 1 (a tie, rounded up): the truth
    for k < (2^54 − 1)/3, P(truth) = (2^54 − 1)/(3N), P(lie) =
    (N + 1)/(3N): ε = ln((2^54 − 1)/(N + 1)) = ln 2 − 1.7e-16."""
    bit = int(x[0] >= 0.5)
    return random.choices([bit, 1 - bit], weights=[2, 1])[0]


def buggy_choices_rr(x):
    """The weights passed as ``cum_weights=[2, 1]``: the total is the last
    cumulative weight, 1, and fl(u·1) < 2 always, so the first entry — the
    truth — always: ε = ∞."""
    bit = int(x[0] >= 0.5)
    return random.choices([bit, 1 - bit], cum_weights=[2, 1])[0]


def choices_exponential(x):
    """The exponential mechanism over {0, 1, 2} with utility −|i − c| for
    the category c = round(2x), weights 2^-|i − c|, drawn with
    ``random.choices``: c = 0 gives (4/7, 2/7, 1/7), c = 1 (1/4, 1/2, 1/4),
    c = 2 (1/7, 2/7, 4/7).  The largest ratio is 4 (c = 0 against c = 2,
    at i = 0 or 2; c = 0 against 1 gives at most 16/7) — ideally.  The
    total 1.75 is no power of 2, so ``choices`` compares fl(1.75·k/N) =
    fl(7k/2^55) with 1 and 1.5, and the products round: below 1 they are
    multiples of 2^-53 (7k rounded to a multiple of 4; the tie at
    7k = 2^55 − 2 rounds up to 1), so i = 0 for k < (2^55 − 2)/7 =
    5146971002709138; below 1.5, multiples of 2^-52 (the tie at
    3·2^54 − 4 rounds up), so i ≤ 1 for k ≤ 7720456504063706.  For c = 0
    the law is (5146971002709138, 2573485501354569, 1286742750677285)/N
    (the exact sevenths of N are …138.29, …569.14, …284.57), c = 2 its
    mirror; c = 1 (total 2) is exact.  ε = ln(5146971002709138/
    1286742750677285) = ln 4 − 3.9e-16."""
    c = int(round(float(x[0]) * 2))
    weights = [2.0 ** -abs(i - c) for i in range(3)]
    return random.choices(range(3), weights=weights)[0]


def choice_rr(x):
    """``random.choice([b, b, 1 − b])``: an exactly uniform index of 3,
    P(truth) = 2/3: ε = ln 2."""
    bit = int(x[0] >= 0.5)
    return random.choice([bit, bit, 1 - bit])


def randint_rr(x):
    """The truth iff a die ``random.randint(1, 6)`` shows at most 4:
    P(truth) = 4/6, ε = ln 2."""
    bit = int(x[0] >= 0.5)
    if random.randint(1, 6) <= 4:
        return bit
    return 1 - bit


def randrange_mod(x):
    """``random.randrange(0, 12, 2)`` is uniform on 0, 2, …, 10, whose
    residues mod 3 are 0, 2, 1, 0, 2, 1: (d + b) mod 3 is uniform for
    either bit, ε = 0."""
    bit = int(x[0] >= 0.5)
    return (random.randrange(0, 12, 2) + bit) % 3


def buggy_randrange_mod(x):
    """``randrange(0, 10, 2)``: five values, residues 0, 2, 1, 0, 2, so
    (d + b) mod 3 puts 2/5 on b and b + 2, 1/5 on b + 1: the output 1 has
    1/5 (bit 0) against 2/5 (bit 1), ε = ln 2."""
    bit = int(x[0] >= 0.5)
    return (random.randrange(0, 10, 2) + bit) % 3


_declare(choices_rr, 0.7, _ln(Fraction(2 ** 54 - 1, N + 1)))
_declare(buggy_choices_rr, 0.7, INF, buggy=True)
_declare(choices_exponential, 1.4, _ln(Fraction(5146971002709138, 1286742750677285)))
_declare(choice_rr, 0.7, _ln(2))
_declare(randint_rr, 0.7, _ln(2))
_declare(randrange_mod, 0.1, 0.0)
_declare(buggy_randrange_mod, 0.1, _ln(2), buggy=True)


# ==================================== 8. early returns, generators built inside
def early_return_rr(x, rng):
    """Up to two fair coins, returning the truth at the first heads, else
    lying: P(truth) = 1/2 + 1/4 = 3/4, ε = ln 3."""
    bit = int(x[0] >= 0.5)
    for _ in range(2):
        if rng.random() < 0.5:
            return bit
    return 1 - bit


def first_flagged(x, rng):
    """Over T = 3 values: randomized response on each value's bit
    (``Fraction(3, 4)`` is exactly 3/4 on the grid), returning the index of
    the first noisy 1 (3 if none) as soon as it is seen.  The output is a
    function of the independent noisy bits; a changed value moves one of
    them, ln 3-DP, and the output "index j" (or any later one) carries
    that bit's factor 3/4 against 1/4: ε = ln 3."""
    for i, v in enumerate(x):
        truth = rng.random() < Fraction(3, 4)
        if int(v >= 0.5) == int(truth):      # the noisy bit is 1
            return i
    return len(x)


def fresh_generator_rr(x):
    """Builds its own unseeded generator: the truth unless
    ``integers(0, 3)`` is 0, P(truth) = 2/3, ε = ln 2."""
    rng = np.random.default_rng()
    bit = int(x[0] >= 0.5)
    return bit if rng.integers(0, 3) else 1 - bit


def buggy_fixed_seed_rr(x):
    """The same "made reproducible" with ``default_rng(0)``: every call
    draws the same integer, so the answer is always the truth (or always
    the lie): ε = ∞."""
    rng = np.random.default_rng(0)
    bit = int(x[0] >= 0.5)
    return bit if rng.integers(0, 3) else 1 - bit


def python_generator_rr(x):
    """An unseeded ``random.Random()``: the truth iff u < 0.75, exactly 3/4:
    ε = ln 3."""
    gen = random.Random()
    bit = int(x[0] >= 0.5)
    return bit if gen.random() < 0.75 else 1 - bit


_declare(early_return_rr, 1.1, _ln(3))
_declare(first_flagged, 1.1, _ln(3), horizon=3)
_declare(fresh_generator_rr, 0.7, _ln(2))
_declare(buggy_fixed_seed_rr, 0.7, INF, buggy=True)
_declare(python_generator_rr, 1.1, _ln(3))


# ======================================================= 9. a stream class
class IntegerRRStream:
    """Randomized response per round with an integer coin: it lies iff
    ``integers(0, n)`` is 0, n = ⌊e^ε⌋ + 1, so P(truth)/P(lie) = ⌊e^ε⌋ ≤ e^ε
    and each round is ln⌊e^ε⌋-DP; one round changes.  At the claim ε = 0.7,
    its default (e^0.7 = 2.01): n = 3, true ε = ln 2."""

    def __init__(self, epsilon=0.7):
        self.n = int(math.exp(epsilon)) + 1
        self.rng = np.random.default_rng()

    def release(self, value):
        bit = int(value >= 0.5)
        return bit if self.rng.integers(0, self.n) else 1 - bit


class BuggyIntegerRRStream(IntegerRRStream):
    """n = ⌈e^ε⌉ + 1 (rounded the wrong way): at ε = 0.7, n = 4 and
    P(truth)/P(lie) = 3, ε = ln 3."""

    def __init__(self, epsilon=0.7):
        super().__init__(epsilon)
        self.n = math.ceil(math.exp(epsilon)) + 1


_declare(IntegerRRStream, 0.7, _ln(2), horizon=3)
_declare(BuggyIntegerRRStream, 0.7, _ln(3), horizon=3, buggy=True)


# ======================================= 10. numpy scalars in and out, conversions
def float32_cast_rr(x, rng):
    """The uniform cast to float32 before the comparison: float32(u) < 0.75
    iff u < 0.75 − 2^-25 (float32's ulp below 0.75 is 2^-24; the halfway
    point rounds to even, up to 0.75), so P(truth) = 3/4 − 2^-25.  The
    output is an ``np.bool_``.  ε = ln((3·2^23 − 1)/(2^23 + 1)) =
    ln 3 − 1.6e-7."""
    bit = int(x[0] >= 0.5)
    if np.float32(rng.random()) < 0.75:
        return np.bool_(bit)
    return np.bool_(1 - bit)


def float32_coin_pad(x, rng):
    """A "fair" coin ``int(np.float32(u) < 0.5)`` XOR the bit: float32(u) <
    0.5 iff u < 0.5 − 2^-26, so P(coin = 1) = 1/2 − 2^-26 and the output
    is not quite uniform: ε = ln((2^25 + 1)/(2^25 − 1)) = 6.0e-8, not 0."""
    bit = int(x[0] >= 0.5)
    return bit ^ int(np.float32(rng.random()) < 0.5)


def float_fraction_rr(x, rng):
    """Lies iff ``float(u) < Fraction(1, 3)``: k < N/3 with N ≡ 2 (mod 3),
    (N + 1)/3 values of k; P(truth) = (2^54 − 1)/(3N), the output an
    ``np.int16``: ε = ln((2^54 − 1)/(N + 1)) = ln 2 − 1.7e-16."""
    bit = int(x[0] >= 0.5)
    lie = float(rng.random()) < Fraction(1, 3)
    return np.int16(1 - bit if lie else bit)


def reflected_fraction_rr(x, rng):
    """The Fraction on the left, ``Fraction(3, 4) > u`` (a reflected
    comparison): exactly 3/4, the output an ``np.uint8``: ε = ln 3."""
    bit = int(x[0] >= 0.5)
    return np.uint8(bit if Fraction(3, 4) > rng.random() else 1 - bit)


def floor_three_shift(x, rng):
    """(⌊3u⌋ + c) mod 3 on the category c = round(2x), with ``math.floor``.
    3u is not exact: fl(3k) for 3k ≥ N rounds to even, so ⌊fl(3k/N)⌋ is 0
    for k < (N + 1)/3, 2 for k ≥ (2^54 − 1)/3 (a tie at 2^54 − 1, rounded
    up), 1 between: probabilities (N + 1)/(3N), (N − 2)/(3N), (N + 1)/(3N).
    Shifting by c permutes them: ε = ln((N + 1)/(N − 2)) = 3.3e-16, not 0."""
    c = int(round(float(x[0]) * 2))
    return (math.floor(rng.random() * 3) + c) % 3


def rr_each_list(x, rng):
    """Over T = 3 values: randomized response on each value's bit with
    ``Fraction(2, 3)``, returned as a list of ints.  One value changes, so
    one answer's law moves: ε = rr_fraction's, ln 2 + 3.3e-16."""
    return [int(v >= 0.5) if rng.random() < Fraction(2, 3) else int(v < 0.5) for v in x]


_declare(float32_cast_rr, 1.1, _ln(Fraction(3 * 2 ** 23 - 1, 2 ** 23 + 1)))
_declare(float32_coin_pad, 0.1, _ln(Fraction(2 ** 25 + 1, 2 ** 25 - 1)))
_declare(float_fraction_rr, 0.7, _ln(Fraction(2 ** 54 - 1, N + 1)))
_declare(reflected_fraction_rr, 1.1, _ln(3))
_declare(floor_three_shift, 0.1, _ln(Fraction(N + 1, N - 2)))
_declare(rr_each_list, 0.7, _ln(Fraction(2 ** 54 + 2, N - 2)), horizon=3)


# ================================================================ the lists
CORRECT = [
    "rr_fraction", "rr_decimal", "rr_longdouble", "rr_float64_scalar", "rr_float32_threshold",
    "rr_exact_double", "rr_seven_tenths_double", "rr_seven_tenths_fraction", "rr_rare_lie",
    "byte_pad", "int8_negation", "uint16_wrap_shift", "uint16_counter_pad",
    "byte_parity_pad", "or_coin_rr", "invert_mod4", "masked_rr", "shift_pack_rr",
    "mod_shift3", "negative_mod", "floordiv_rr",
    "rejection_krr", "rejection_uniform_rr",
    "or_reroll", "max_reroll",
    "choices_rr", "choices_exponential", "choice_rr", "randint_rr", "randrange_mod",
    "early_return_rr", "first_flagged", "fresh_generator_rr", "python_generator_rr",
    "IntegerRRStream",
    "float32_cast_rr", "float32_coin_pad", "float_fraction_rr", "reflected_fraction_rr",
    "floor_three_shift", "rr_each_list",
]

BUGGY = [
    "buggy_rr_fraction", "buggy_byte_pad", "buggy_int8_negation", "buggy_uint16_wrap_shift",
    "buggy_byte_parity_pad", "buggy_invert_mod4", "buggy_masked_rr", "buggy_shift_pack_rr",
    "buggy_mod_shift3", "buggy_negative_mod", "buggy_floordiv_rr", "buggy_rejection_krr",
    "buggy_or_reroll", "buggy_max_reroll", "buggy_choices_rr", "buggy_randrange_mod",
    "buggy_fixed_seed_rr", "BuggyIntegerRRStream",
]
