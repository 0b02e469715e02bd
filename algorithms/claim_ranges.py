"""The parameters a privacy claim quantifies over, and the algorithm at
other values of them.

A theorem that holds "for every T" (every batch length τ ≥ 1, every η > 0,
any number of experts) can fail at T = 2 and hide at the default T = 1000.
An algorithm declares the ranges its claim holds for,
``Algorithm.extra["claim_ranges"]``: a tuple of ``ClaimRange`` (or a
mapping ``{param: (low, high[, source])}``, ``parse_ranges``), each naming a
parameter the way ``algorithms.build`` takes it — ``horizon``, ``arms``,
``experts`` or one of the factory's own parameters (``tau``, ``eta``…) — with
the theorem that states the range.  The neighbour search then tries the
cheap corners of those ranges (``variants``: T = 2, 3, 4, 8, 17, the
smallest K or N, the largest η the theorem allows) as algorithms of their
own, each rebuilt by ``Algorithm.extra["rebuild_at"]``
(``algorithms.registry.Rebuild``: the same builder with the same flags,
one value changed), and the audit reports
where its strongest evidence was found with the command that reruns it.

``RANGES`` holds the ranges of the registered algorithms of the four
papers, each beside the statement it is read from (papers in
``/work/shared/papers``); ``algorithms.build`` attaches them, and the
rebuild, to every algorithm it builds.

May import: nothing from ``algorithms`` (the registry imports this module and
attaches the rebuild).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

# The horizons tried first: tiny trees and batches, one past a power of two.
CHEAP_HORIZONS = (2, 3, 4, 8, 17)
SIZES = ("horizon", "arms", "experts")
MAX_VARIANTS = 8


@dataclass(frozen=True)
class ClaimRange:
    """The claim holds for every value of ``param`` in [``low``, ``high``]
    (None: unbounded), as ``source`` states.  ``corners`` are the values the
    search tries (default: the cheap horizons within the range for
    ``horizon``; the smallest value for ``arms`` and ``experts``; the
    largest finite value for any other parameter, else its smallest
    positive one)."""

    param: str
    low: Optional[float] = None
    high: Optional[float] = None
    source: str = ""
    corners: Optional[tuple] = None

    def __post_init__(self):
        if not isinstance(self.param, str) or not self.param:
            raise ValueError(f"claim_ranges: a parameter name must be a non-empty string, got "
                             f"{self.param!r}")
        for end in ("low", "high"):
            v = getattr(self, end)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not math.isfinite(v)):
                raise ValueError(f"claim_ranges[{self.param!r}]: {end} must be a finite number "
                                 f"or None, got {v!r}")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"claim_ranges[{self.param!r}]: low {self.low:g} > high "
                             f"{self.high:g}")
        if self.param in SIZES:
            for end in ("low", "high"):
                v = getattr(self, end)
                if v is not None and (v < 1 or float(v) != int(v)):
                    raise ValueError(f"claim_ranges[{self.param!r}]: {end} must be an integer "
                                     f">= 1, got {v!r}")
        if self.corners is not None:
            for c in self.corners:
                if not self.contains(c):
                    raise ValueError(f"claim_ranges[{self.param!r}]: corner {c!r} lies outside "
                                     f"[{self.low}, {self.high}]")

    def contains(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            return False
        return (self.low is None or value >= self.low) and \
               (self.high is None or value <= self.high)

    def corner_values(self) -> tuple:
        """The values the search tries, cheapest first."""
        if self.corners is not None:
            return tuple(self.corners)
        if self.param == "horizon":
            return tuple(h for h in CHEAP_HORIZONS if self.contains(h))
        if self.param in SIZES:
            return (int(self.low),) if self.low is not None else ()
        if self.high is not None:
            return (self.high,)
        return (self.low,) if self.low is not None and self.low > 0 else ()

    def words(self) -> str:
        lo = "−∞" if self.low is None else f"{self.low:g}"
        hi = "∞" if self.high is None else f"{self.high:g}"
        left = "[" if self.low is not None else "("
        right = "]" if self.high is not None else ")"
        where = f" ({self.source})" if self.source else ""
        return f"{self.param} ∈ {left}{lo}, {hi}{right}{where}"


def parse_ranges(value, where: str = "claim_ranges") -> tuple:
    """``ClaimRange``s from a tuple of them or a mapping ``{param: (low,
    high)}`` / ``{param: (low, high, source)}`` / ``{param: ClaimRange}``;
    ``ValueError`` naming ``where`` and the key otherwise."""
    if value is None:
        return ()
    if isinstance(value, ClaimRange):
        return (value,)
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            if isinstance(v, ClaimRange):
                out.append(v)
                continue
            if not isinstance(v, (tuple, list)) or len(v) not in (2, 3):
                raise ValueError(f"{where}[{k!r}] must be (low, high) or (low, high, source), "
                                 f"got {v!r}")
            try:
                out.append(ClaimRange(str(k), v[0], v[1], str(v[2]) if len(v) == 3 else ""))
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}".replace("claim_ranges: ", "").replace(
                    "claim_ranges[", f"{where}[")) from None
        return tuple(out)
    if isinstance(value, (tuple, list)) and all(isinstance(r, ClaimRange) for r in value):
        return tuple(value)
    raise ValueError(f"{where} must be a mapping {{param: (low, high)}} or a tuple of "
                     f"ClaimRange, got {type(value).__name__}")


def ranges_of(alg) -> tuple:
    """The declared ranges of ``alg`` (none when it declares none)."""
    return parse_ranges((getattr(alg, "extra", None) or {}).get("claim_ranges"))


def current_value(alg, param: str):
    if param == "horizon":
        return alg.horizon
    if param == "arms":
        return alg.n_arms
    if param == "experts":
        return alg.n_experts
    return (alg.params or {}).get(param)


def variant_changes(alg) -> list[dict]:
    """The parameter changes the search tries, cheapest first: every
    corner horizon with the other parameters at their stress corners, then
    each other parameter's corners at the algorithm's own horizon; at most
    ``MAX_VARIANTS``, none equal to the algorithm itself."""
    ranges = ranges_of(alg)
    if not ranges:
        return []
    horizon = next((r for r in ranges if r.param == "horizon"), None)
    others = [r for r in ranges if r.param != "horizon"]
    stress = {}
    for r in others:
        c = r.corner_values()
        if c:
            stress[r.param] = c[0]
    out = []
    for h in (horizon.corner_values() if horizon else ()):
        out.append({"horizon": int(h), **stress})
    for r in others:
        for c in r.corner_values():
            out.append({r.param: c})
    seen, kept = set(), []
    for ch in out:
        ch = {k: v for k, v in ch.items() if current_value(alg, k) != v}
        key = tuple(sorted(ch.items()))
        if ch and key not in seen:
            seen.add(key)
            kept.append(ch)
    return kept[:MAX_VARIANTS]


def variants(alg) -> list:
    """The algorithm rebuilt at each of ``variant_changes`` (where it can
    be: a change its builder refuses is skipped), each with
    ``extra["swept"]`` = the changes."""
    rebuild = (getattr(alg, "extra", None) or {}).get("rebuild_at")
    if rebuild is None:
        return []
    out = []
    for ch in variant_changes(alg):
        try:
            v = rebuild(**ch)
        except (ValueError, TypeError):
            continue
        except Exception as exc:    # noqa: BLE001 - a user's factory raising at a corner
            if type(exc).__name__ == "UserCodeError":
                continue
            raise
        v.extra["swept"] = dict(ch)
        out.append(v)
    return out


def flags_of(changes: dict) -> list[str]:
    """The ``audit run`` flags that set ``changes``."""
    out = []
    for k, v in changes.items():
        shown = f"{v:g}" if isinstance(v, float) else str(v)
        if k in SIZES:
            out += [f"--{k}", shown]
        else:
            out += ["--param", f"{k}={shown}"]
    return out


def describe(changes: dict) -> str:
    return ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                     for k, v in changes.items())


def _r(param, low=None, high=None, source="", corners=None):
    return ClaimRange(param, low, high, source, corners)


# -------------------------------------------------------- registered ranges
_ART = "Asi, Raman & Talwar (ICML 2025)"
_LEMMA33 = (f"{_ART}, Lemma 3.3: 'For every bandit algorithm B, batch size τ ≥ 1, and ε ≤ 1, "
            f"Algorithm 1 is ε-differentially private' (no condition on T or K)")
_THM42 = (f"{_ART}, Theorem 4.2: 'for every τ ≥ 1 and ε ≤ 1, there exists an ε-differentially "
          f"private bandit with expert advice algorithm A_τ' (any T, K, N)")
_THM44 = (f"{_ART}, Theorem 4.4: 'For every ε ≤ 1, Algorithm 6 when run with η = …, γ = … is "
          f"ε-differentially private' (any T, K, N)")
_THM45 = (f"{_ART}, Theorem 4.5: 'For every ε, δ ∈ (0, 1], Algorithm 2, when run with η, τ, γ = "
          f"…' (any T, K, N)")
_AS = "Agarwal & Singh (ICML 2017)"
_AS31 = (f"{_AS}, Theorem 3.1 / Corollary 3.2.1: λ = N log T/ε for any horizon T (the tree needs "
         f"T ≥ 2) and N experts")
_AS33 = f"{_AS}, Lemma 3.3: (L̃_t : t ∈ [T]) ε-DP for any T with λ ≥ ‖l‖₁ log T/ε"
_AS35 = f"{_AS}, Theorem 3.5: σ as stated, any T ≥ 2 and N"
_AS41 = f"{_AS}, Theorem 4.1: 'Fix loss vectors (l_1 … l_T)', any T and N, λ = 1/ε"
_ARS = "Asi, Raman & Saha, Tracking the Best Expert Privately"
_ARS31 = f"{_ARS}, Theorem 3.1: 'for any t ∈ [T] and w ∈ [T − t], Algorithm 1 is ε-DP'"
_ARS36 = f"{_ARS}, Theorem 3.6: Algorithm 2 run with ε and β = 1/T is ε-DP (any T, N)"
_ARSB2 = (f"{_ARS}, Theorem B.2: 'Algorithm 3, when run with ε, η > 0 is ε-differentially "
          f"private' (any T, N)")
_ENV = "Ene, Nguyen & Vladu (AAAI 2021)"
_ENV7 = f"{_ENV}, Lemma 7: PRIVATEBANDIT(T, P) with coordinate-wise Laplace noise, any T, n"
_ENV10 = f"{_ENV}, Lemma 10: PRIVATEBANDIT(T, P) with Gaussian noise, any T, n"


def _conversion(source):
    return (_r("horizon", 2, None, source), _r("arms", 2, None, source),
            _r("tau", 1, None, source, corners=(1,)))


def _experts_conversion(source):
    return (_r("horizon", 2, None, source), _r("experts", 2, None, source),
            _r("tau", 1, None, source, corners=(1,)))


def _sizes(source, low_horizon=2, experts=False, arms_low=2):
    out = [_r("horizon", low_horizon, None, source), _r("arms", arms_low, None, source)]
    if experts:
        out.append(_r("experts", 2, None, source))
    return tuple(out)


RANGES = {
    "private-exp3": _conversion(_LEMMA33),
    "private-ftpl": _conversion(_LEMMA33),
    "private-htinf": _conversion(_LEMMA33),
    "private-experts": _experts_conversion(_THM42),
    "ldp-exp4": _sizes(_THM44, experts=True),
    "private-batched-exp4": _sizes(_THM45, experts=True),
    # The mutants claim what their correct algorithm claims.
    "mutant-batch-sum": _conversion(_LEMMA33),
    "mutant-noise-tau": _conversion(_LEMMA33),
    "mutant-overlap": _experts_conversion(_THM42),
    "mutant-ldp-after": _sizes(_THM44, experts=True),
    "mutant-exp4-noise": _sizes(_THM45, experts=True),
    "as-ftrl-experts": _sizes(_AS31),
    "as-ftrl-experts-unit": _sizes(_AS31),
    "as-ftrl-experts-ln": _sizes(_AS31),
    "as-ftrl-lemma33": _sizes(_AS33),
    "as-ftpl": _sizes(_AS35),
    "as-ftpl-unit": _sizes(_AS35),
    "as-bandit-exp2": _sizes(_AS41),
    "as-bandit-exp2-unit": _sizes(_AS41),
    "tbe-lazy": _sizes(_ARS31),
    "tbe-lazy-mutant-noise": _sizes(_ARS31),
    "tbe-svt": _sizes(_ARS36),
    "tbe-svt-fixed": _sizes(_ARS36),
    # "any η > 0": no largest η, so the corner is η = 1 (where Theorem B.2
    # is refuted at N = 2) and a far larger one.
    "tbe-adaptive": _sizes(_ARSB2) + (_r("eta", 0.0, None, _ARSB2, corners=(1.0, 8.0)),),
    "tbe-adaptive-fixed": _sizes(_ARSB2) + (_r("eta", 0.0, None, _ARSB2,
                                                corners=(1.0, 8.0)),),
    "tbe-adaptive-n2": _sizes(_ARSB2) + (_r("eta", 0.0, None, _ARSB2, corners=(8.0,)),),
    "pfb-laplace": _sizes(_ENV7, low_horizon=4),
    "pfb-laplace-derived": _sizes(_ENV7, low_horizon=4),
    "pfb-gaussian": _sizes(_ENV10, low_horizon=4),
    "pfb-gaussian-derived": _sizes(_ENV10, low_horizon=4),
}
