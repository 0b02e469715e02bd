"""Watching what a learner draws: an instrumented random generator and a
learner wrapper that tags every draw with the call it came from.

White-box evidence rests on numbers (a noise scale, a threshold, the law an
action is drawn from), and an exact figure is a supremum set precisely by
them, so the numbers must come from the code, not from a declaration.  The
tool already hands every learner its generator; here that generator is a
``RecordingGenerator``: a ``numpy.random.Generator`` on the same bit
generator, so it yields exactly the plain stream, that also keeps every draw
(``Draw``: the method, its parameters broadcast to the values' shape, the
values, and the learner call it happened in).  ``observe`` wraps a learner so
that the generator knows which call is running (``init``, or ``act``/``feed``
of round t, 0-based).

What the draws are checked against lives with each declared model
(``audit.engine.models.*``); ``runs_view`` and ``standardized`` are what they
share: a draw's values with the runs axis first, and a location-scale draw
as (value − loc)/scale.

May import: numpy and ``algorithms``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

# Methods whose draws are kept, with their parameter names in call order.
# Anything else a learner calls on the generator is kept too (as "other"),
# so a model never mistakes an unusual draw for no draw.
_PARAMS = {
    "laplace": ("loc", "scale", "size"),
    "normal": ("loc", "scale", "size"),
    "gumbel": ("loc", "scale", "size"),
    "logistic": ("loc", "scale", "size"),
    "exponential": ("scale", "size"),
    "standard_normal": ("size",),
    "standard_exponential": ("size",),
    "random": ("size",),
    "uniform": ("low", "high", "size"),
    "integers": ("low", "high", "size"),
    "choice": ("a", "size", "replace", "p"),
    "standard_gamma": ("shape", "size"),
    "gamma": ("shape", "scale", "size"),
    "binomial": ("n", "p", "size"),
    "poisson": ("lam", "size"),
    "geometric": ("p", "size"),
    "beta": ("a", "b", "size"),
    "permutation": ("x",),
    "shuffle": ("x",),
    "permuted": ("x",),
    "multinomial": ("n", "pvals", "size"),
    "dirichlet": ("alpha", "size"),
    "standard_cauchy": ("size",),
    "standard_t": ("df", "size"),
    "chisquare": ("df", "size"),
    "bytes": ("length",),
}
# Location-scale families: the standard form of a draw is (x − loc)/scale.
LOCATION_SCALE = {"laplace": "laplace", "normal": "gaussian", "standard_normal": "gaussian"}
_DEFAULTS = {"loc": 0.0, "scale": 1.0}


@dataclass
class Draw:
    """One call to the generator: ``method``, ``params`` (name → value as
    passed, defaults filled in for the location-scale families), ``values``
    (a copy of what it returned), ``phase`` (``("init", -1)``,
    ``("act", t)`` or ``("feed", t)``) and its place in the call order."""

    method: str
    params: dict
    values: np.ndarray
    phase: tuple
    order: int

    @property
    def family(self) -> Optional[str]:
        return LOCATION_SCALE.get(self.method)

    def param(self, name: str) -> np.ndarray:
        """A parameter broadcast to the values' shape."""
        value = self.params.get(name, _DEFAULTS.get(name))
        return np.broadcast_to(np.asarray(value, dtype=float), self.values.shape)

    def standardized(self) -> np.ndarray:
        """(x − loc)/scale for a location-scale draw."""
        return (self.values - self.param("loc")) / self.param("scale")

    def constant(self, name: str) -> Optional[float]:
        """The parameter's value when it is one number for every element."""
        p = np.asarray(self.params.get(name, _DEFAULTS.get(name)), dtype=float)
        if p.size == 0:
            return None
        flat = p.ravel()
        return float(flat[0]) if np.all(flat == flat[0]) else None


class RecordingGenerator(np.random.Generator):
    """A ``numpy.random.Generator`` that keeps every draw.  Built on the
    same bit generator as ``numpy.random.default_rng(seed)``, it yields
    exactly the same stream: recording reads the values, it never draws."""

    def __init__(self, seed, keep=None):
        super().__init__(np.random.PCG64(seed))
        self.draws: list[Draw] = []
        self.phase: tuple = ("init", -1)
        # Methods whose values are kept (None: all); the others are kept
        # without values, so a model still sees that they were drawn.
        self.keep = None if keep is None else frozenset(keep)

    def _keep(self, method, args, kwargs, values):
        names = _PARAMS.get(method, ())
        params = dict(zip(names, args))
        params.update(kwargs)
        params.pop("size", None)
        params.pop("out", None)
        if method in LOCATION_SCALE:
            for key, default in _DEFAULTS.items():
                params.setdefault(key, default)
        if isinstance(values, bytes) or (self.keep is not None and method not in self.keep):
            arr = np.empty(0)
        else:
            arr = np.array(values, copy=True)
        self.draws.append(Draw(method, params, arr, self.phase, len(self.draws)))


def _recording(method):
    def call(self, *args, **kwargs):
        values = getattr(np.random.Generator, method)(self, *args, **kwargs)
        target = values if values is not None else (args[0] if args else kwargs.get("x"))
        self._keep(method, args, kwargs, target)
        return values
    call.__name__ = method
    return call


for _name in _PARAMS:
    setattr(RecordingGenerator, _name, _recording(_name))


def observe(learner, rng: RecordingGenerator):
    """The learner with every call tagged on ``rng``: draws made inside
    ``init`` are phase ``("init", -1)``, inside the t-th ``act`` or ``feed``
    (0-based) ``("act", t)`` or ``("feed", t)``."""
    counts = {"act": 0, "feed": 0}

    def tagged(name, fn):
        def call(*args):
            rng.phase = (name, counts[name])
            counts[name] += 1
            return fn(*args)
        return call

    def init(runs, r):
        counts["act"] = counts["feed"] = 0
        rng.phase = ("init", -1)
        return learner.init(runs, r)

    return learner._replace(init=init, act=tagged("act", learner.act),
                            feed=tagged("feed", learner.feed))


def runs_view(draw: Draw, runs: int) -> Optional[np.ndarray]:
    """The draw's values as (runs, k), the runs axis first, or None when no
    axis (or more than one) has length ``runs``: such a draw is shared by
    every run (or cannot be attributed to one)."""
    axes = [i for i, n in enumerate(draw.values.shape) if n == runs]
    if len(axes) != 1:
        return None
    return np.moveaxis(draw.values, axes[0], 0).reshape(runs, -1)


def runs_view_of(values: np.ndarray, shape: tuple, runs: int) -> np.ndarray:
    """``values`` broadcast to a draw's ``shape``, laid out like ``runs_view``."""
    axes = [i for i, n in enumerate(shape) if n == runs]
    full = np.broadcast_to(values, shape)
    return np.moveaxis(full, axes[0], 0).reshape(runs, -1)


def in_phase(draws, phases) -> list[Draw]:
    wanted = set(phases)
    return [d for d in draws if d.phase in wanted]


UNIFORM_SLACK = 1e-9     # floating-point slack at the edges of an inverse-CDF interval


def uniform_columns(draws, runs: int) -> list[np.ndarray]:
    """Every recorded U[0, 1) value with a runs axis, as (runs,) columns:
    ``random()`` draws and ``uniform()`` draws on [0, 1)."""
    out = []
    for d in draws:
        if d.method == "uniform" and not (d.constant("low") == 0.0 and d.constant("high") == 1.0):
            continue
        if d.method not in ("random", "uniform"):
            continue
        view = runs_view(d, runs)
        if view is not None:
            out += [view[:, j] for j in range(view.shape[1])]
    return out


def inverse_cdf_explains(p: np.ndarray, actions: np.ndarray, draws, runs: int) -> np.ndarray:
    """Which runs' actions are the inverse CDF of ``p`` (runs, K) at one
    recorded uniform of ``draws`` (the same column for every run): the
    action a with F(a − 1) ≤ u < F(a), or p one-hot at a (nothing to draw).
    The column explaining the most runs is used."""
    idx = np.arange(runs)
    cum = np.cumsum(p, axis=1)
    hi = cum[idx, actions]
    lo = hi - p[idx, actions]
    certain = p[idx, actions] >= 1.0 - 1e-12
    best = certain
    for u in uniform_columns(draws, runs):
        ok = certain | ((u >= lo - UNIFORM_SLACK) & (u < hi + UNIFORM_SLACK)
                        & (p[idx, actions] > 0))
        if ok.sum() > best.sum():
            best = ok
    return best


def describe_draws(draws) -> str:
    """The draws of one call, in words (for a refusal's reason)."""
    if not draws:
        return "no draw"
    parts = []
    for d in draws[:6]:
        params = ", ".join(f"{k}={_short(v)}" for k, v in d.params.items())
        parts.append(f"{d.method}({params}) of shape {d.values.shape}")
    more = f" and {len(draws) - 6} more" if len(draws) > 6 else ""
    return "; ".join(parts) + more


def _short(v) -> str:
    a = np.asarray(v)
    if a.size == 1:
        return f"{float(a.ravel()[0]):.6g}" if a.dtype.kind in "fiu" else repr(v)
    return f"array{a.shape}"
