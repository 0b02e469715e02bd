"""A generator that draws for many blocks of runs at once, each block from
its own seed (``BlockedGenerator``): coupled runs need both sides of a
block to draw from one seed, and a vectorised learner asked for the whole
chunk in one call then draws, for the runs of block j, exactly what it
would have drawn in a call of its own on block j's generator.

The runs of a vectorised learner are independent of one another: row i of
every draw belongs to run i.  A draw whose leading dimension is the
chunk's runs is therefore cut into the blocks' rows and each block's part
drawn from its own generator, with the parameters (loc, scale, …) cut the
same way.  Anything else — a draw of another shape, a permutation, the
bit generator itself — cannot be split by row: the generator raises
``NotBlockable`` and remembers it (``failed``), and the caller runs the
blocks one call each instead.  Splitting never changes a draw: a learner
that runs blocked gives, block for block, what it gives on each block's
generator alone (``tests/test_blocks.py`` checks it on every vectorised
learner of the registry).

May import: numpy only.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

# Each method's arguments in order: the distribution's parameters (cut by
# row where they vary by run), then ``size``, then options passed as given.
# A method not listed is not split (``NotBlockable``).
_SIGNATURES = {
    "random": ((), ("dtype",)),
    "standard_normal": ((), ("dtype",)),
    "standard_exponential": ((), ("dtype", "method")),
    "standard_cauchy": ((), ()),
    "standard_gamma": (("shape",), ("dtype",)),
    "uniform": (("low", "high"), ()),
    "normal": (("loc", "scale"), ()),
    "laplace": (("loc", "scale"), ()),
    "gumbel": (("loc", "scale"), ()),
    "logistic": (("loc", "scale"), ()),
    "lognormal": (("mean", "sigma"), ()),
    "exponential": (("scale",), ()),
    "gamma": (("shape", "scale"), ()),
    "beta": (("a", "b"), ()),
    "chisquare": (("df",), ()),
    "geometric": (("p",), ()),
    "poisson": (("lam",), ()),
    "binomial": (("n", "p"), ()),
    "integers": (("low", "high"), ("dtype", "endpoint")),
}


class NotBlockable(RuntimeError):
    """A draw the blocked generator cannot cut into blocks of runs."""


class BlockedGenerator:
    """Draws for ``len(seeds)`` blocks of ``m`` runs, block j's rows from
    ``np.random.default_rng(seeds[j])`` (module docstring)."""

    def __init__(self, seeds, m: int):
        self._gens = [np.random.default_rng(s) for s in seeds]
        self._m = int(m)
        self._n = self._m * len(self._gens)
        self.failed: Optional[str] = None

    def block_generators(self):
        """(each block's numpy generator, runs a block): what another
        backend's generator draws its blocks' keys from
        (``algorithms.backend.DeviceGenerator``)."""
        return self._gens, self._m

    def refuse(self, what: str):
        """Refuse a draw that cannot be cut into blocks (``NotBlockable``)."""
        self._refuse(what)

    def _refuse(self, what: str):
        self.failed = self.failed or what
        raise NotBlockable(f"{what} cannot be drawn block by block")

    def __getattr__(self, name):
        # Only reached for what the class does not define: the generator's
        # other methods and attributes (bit_generator, spawn, permutation…).
        if name.startswith("__"):
            raise AttributeError(name)
        self._refuse(f"rng.{name}")

    def _draw(self, method: str, args: tuple, kwargs: dict):
        params, options = _SIGNATURES[method]
        names = params + ("size",) + options
        if len(args) > len(names) or "out" in kwargs:
            self._refuse(f"rng.{method} with these arguments")
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in bound:
                self._refuse(f"rng.{method}({k}=…)")
            bound[k] = v
        size = bound.pop("size", None)
        given = {k: bound.pop(k) for k in params if k in bound}
        shape = (tuple(np.atleast_1d(size).astype(int)) if size is not None
                 else np.broadcast_shapes(*(np.shape(v) for v in given.values())))
        if not shape or shape[0] != self._n:
            self._refuse(f"rng.{method} of shape {shape} (not {self._n} runs by row)")
        m, k = self._m, len(self._gens)
        # Parameters that vary by run, as (block, row, …); the rest as given.
        cut = {name: np.broadcast_to(v, shape).reshape((k, m) + shape[1:])
               for name, v in given.items() if np.ndim(v)}
        fixed = {name: v for name, v in given.items() if not np.ndim(v)}
        fixed.update(bound, size=(m,) + shape[1:])
        draws = [getattr(g, method) for g in self._gens]
        if not cut:
            return np.concatenate([f(**fixed) for f in draws])
        return np.concatenate([f(**{name: v[j] for name, v in cut.items()}, **fixed)
                               for j, f in enumerate(draws)])

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        shape = None if size is None else tuple(np.atleast_1d(size).astype(int))
        # Without replacement the runs' picks are not independent of one
        # another; along another axis the rows are not the runs.
        if not replace or axis != 0 or not shape or shape[0] != self._n:
            self._refuse("rng.choice of this shape")
        m = self._m
        return np.concatenate([g.choice(a, size=(m,) + shape[1:], p=p) for g in self._gens])


def _method(name):
    def draw(self, *args, **kwargs):
        return self._draw(name, args, kwargs)
    draw.__name__ = name
    return draw


for _name in _SIGNATURES:
    setattr(BlockedGenerator, _name, _method(_name))
