"""Array backends: where a vectorised learner's arrays live and how its
draws are made.  ``numpy`` is the default; ``jax`` runs the same learner
code on JAX arrays, on whatever device JAX finds (a GPU where there is one,
else the CPU).

A learner written for both takes its array namespace from what it is
given — ``xp = xp_of(rng)`` in ``init``, ``xp_of(state[...])`` elsewhere —
and draws only through the generator's methods (``random``, ``uniform``,
``integers``, ``laplace``, ``normal``, ``exponential``, ``gumbel``, …),
never writing into an array in place (JAX arrays are immutable; the
helpers below do it either way).  It says so with ``extra["backends"] =
("numpy", "jax")`` on its ``Algorithm`` (a registry entry's
``backends``).

On JAX the simulation is handed a ``DeviceGenerator`` built from the numpy
generator the audit gives it: its key is drawn from that generator, so a
chunk's seed fixes its runs on either backend, and a blocked generator
(coupled runs, ``audit.execution.blocks``) becomes one key per block, block
j's rows drawn from block j's key — the draws a call per block makes.  JAX
runs in 64-bit floats here (``jax_enable_x64``), like numpy: a learner is
the same program on both backends, only its random streams differ.

May import: numpy; JAX only when the jax backend is asked for.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

BACKENDS = ("numpy", "jax")


class BackendUnavailable(ValueError):
    """The backend asked for cannot run here (JAX not installed)."""


def check_backend(name: str) -> str:
    """``name`` if it is a backend this machine can run, else ``ValueError``
    naming what is allowed (``BackendUnavailable`` when JAX is missing)."""
    if name not in BACKENDS:
        raise ValueError(f"--backend {name!r}: choose from {', '.join(BACKENDS)}")
    if name == "jax":
        jax_modules()
    return name


_JAX = None


def jax_modules():
    """(jax, jax.numpy), imported once with 64-bit floats switched on."""
    global _JAX
    if _JAX is None:
        try:
            import jax
            import jax.numpy as jnp
        except ImportError:
            raise BackendUnavailable("--backend jax: JAX is not installed; pip install "
                                     "'bandit-privacy-audit[jax]' (CPU), or JAX's GPU build "
                                     "where there is a GPU") from None
        jax.config.update("jax_enable_x64", True)
        _JAX = (jax, jnp)
    return _JAX


def device_name() -> str:
    """What JAX runs on, in words (``gpu: NVIDIA H200``, ``cpu``)."""
    jax, _ = jax_modules()
    d = jax.devices()[0]
    kind = getattr(d, "device_kind", "") or ""
    return f"{d.platform}: {kind}" if kind and kind.lower() != d.platform else d.platform


def supports(alg, backend: str) -> bool:
    """Whether ``alg`` says its learner runs on ``backend``."""
    extra = alg.extra if isinstance(alg.extra, dict) else {}
    return backend == "numpy" or backend in tuple(extra.get("backends") or ("numpy",))


def on_backend(alg, backend: str):
    """``alg`` to be simulated on ``backend``: a copy whose ``extra``
    names it (read by ``algorithms.simulate``); ``alg`` itself for numpy.
    ``ValueError`` where ``alg`` does not run there."""
    if backend == "numpy":
        return alg
    check_backend(backend)
    if not supports(alg, backend):
        raise ValueError(f"--backend {backend}: {alg.name} runs on numpy only (its learner is "
                         f"written against numpy arrays; a learner written for both says "
                         f"extra['backends'] = ('numpy', '{backend}'))")
    import dataclasses
    return dataclasses.replace(alg, extra={**alg.extra, "backend": backend})


def backend_of(alg) -> str:
    extra = alg.extra if isinstance(alg.extra, dict) else {}
    return extra.get("backend", "numpy")


# ------------------------------------------------------------ namespaces
def xp_of(obj):
    """The array namespace of an array or generator: ``jax.numpy`` for a
    JAX array or a ``DeviceGenerator``, numpy for anything else."""
    if type(obj) is np.ndarray or _JAX is None:
        return np
    if isinstance(obj, DeviceGenerator):
        return _JAX[1]
    if isinstance(obj, _JAX[0].Array):
        return _JAX[1]
    return np


def add_at(xp, a, rows, cols, values):
    """``a`` with ``values`` added at ``(rows, cols)`` (a new array; numpy
    copies and adds in place, JAX scatters)."""
    if xp is np:
        out = a.copy()
        out[rows, cols] += values
        return out
    return a.at[rows, cols].add(values)


def one_hot(xp, actions, k: int):
    """(runs, k) rows with 1.0 at each run's action."""
    return (actions[:, None] == xp.arange(k)[None, :]).astype(xp.float64)


# ------------------------------------------------------------ generator
def _shape(size, *params) -> tuple:
    if size is not None:
        return tuple(int(s) for s in np.atleast_1d(size))
    return tuple(np.broadcast_shapes(*(np.shape(p) for p in params)))


class DeviceGenerator:
    """numpy's ``Generator`` methods over JAX keys: one key (a chunk's
    stream), or one per block of ``m`` runs (coupled runs), each draw then
    of ``blocks·m`` rows, block j's from block j's key.  Built from the
    numpy generator the audit gives (``from_numpy``)."""

    def __init__(self, keys, m: Optional[int] = None, refuse=None):
        self.xp = jax_modules()[1]
        self._keys = keys                 # (blocks, 2) uint32 raw keys
        self._m = m                       # runs a block (None: one key, any shape)
        self._refuse = refuse

    @staticmethod
    def key_seed(g: np.random.Generator) -> int:
        """The 64-bit seed of a JAX key, the first draw of ``g``."""
        return int(g.integers(0, 2 ** 63, dtype=np.int64))

    @classmethod
    def from_numpy(cls, rng) -> "DeviceGenerator":
        jax, jnp = jax_modules()
        blocks = getattr(type(rng), "block_generators", None)
        if blocks is not None:
            gens, m = rng.block_generators()
            seeds = [cls.key_seed(g) for g in gens]
            refuse = getattr(rng, "refuse")
        else:
            seeds, m, refuse = [cls.key_seed(rng)], None, None
        keys = jnp.stack([jax.random.PRNGKey(s) for s in seeds])
        return cls(keys, m, refuse)

    def _split(self):
        both = _split_keys(self._keys)
        self._keys = both[:, 0]
        return both[:, 1]

    def _standard(self, kind: str, shape: tuple, extra=None):
        """Standard draws of ``shape``: from the one key, or block by block."""
        sub = self._split()
        k = sub.shape[0]
        if self._m is None:
            return _draw(kind, sub[0], shape, extra)
        n = self._m * k
        if not shape or shape[0] != n:
            self._refuse(f"rng.{kind} of shape {shape} (not {n} runs by row)")
        z = _draw_blocks(kind, sub, (self._m,) + tuple(shape[1:]), extra)
        return z.reshape(shape)

    # numpy's signatures (the parameters broadcast against ``size``)
    def random(self, size=None, dtype=np.float64):
        return self._standard("uniform", _shape(size))

    def uniform(self, low=0.0, high=1.0, size=None):
        u = self._standard("uniform", _shape(size, low, high))
        return low + (self.xp.asarray(high) - low) * u

    def standard_normal(self, size=None, dtype=np.float64):
        return self._standard("normal", _shape(size))

    def normal(self, loc=0.0, scale=1.0, size=None):
        return loc + self.xp.asarray(scale) * self._standard("normal", _shape(size, loc, scale))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return loc + self.xp.asarray(scale) * self._standard("laplace", _shape(size, loc, scale))

    def standard_exponential(self, size=None, dtype=np.float64, method=None):
        return self._standard("exponential", _shape(size))

    def exponential(self, scale=1.0, size=None):
        return self.xp.asarray(scale) * self._standard("exponential", _shape(size, scale))

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        return loc + self.xp.asarray(scale) * self._standard("gumbel", _shape(size, loc, scale))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        if endpoint:
            high = high + 1
        if np.ndim(low) or np.ndim(high):
            # Per-run bounds: an integer uniform on [low, high) by the floor
            # of a uniform (exact while high − low ≪ 2^52).
            u = self._standard("uniform", _shape(size, low, high))
            lo = self.xp.asarray(low)
            return (lo + self.xp.floor(u * (self.xp.asarray(high) - lo))).astype(dtype)
        span = int(high) - int(low)
        if span <= 0:
            raise ValueError(f"integers: high must be > low, got [{low}, {high})")
        z = self._standard("randint", _shape(size), (span,))
        return (int(low) + z).astype(dtype)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotImplementedError(f"rng.{name} is not available on the jax backend (its "
                                  f"generator has random, uniform, integers, normal, laplace, "
                                  f"exponential, gumbel)")


_FN = {}


def _split_keys(keys):
    if "split" not in _FN:
        jax, _ = jax_modules()
        _FN["split"] = jax.jit(jax.vmap(lambda k: jax.random.split(k)))
    return _FN["split"](keys)


def _sampler(kind: str, key, shape, extra):
    jax, jnp = jax_modules()
    r = jax.random
    if kind == "uniform":
        return r.uniform(key, shape, dtype=jnp.float64)
    if kind == "normal":
        return r.normal(key, shape, dtype=jnp.float64)
    if kind == "laplace":
        return r.laplace(key, shape, dtype=jnp.float64)
    if kind == "exponential":
        return r.exponential(key, shape, dtype=jnp.float64)
    if kind == "gumbel":
        return r.gumbel(key, shape, dtype=jnp.float64)
    if kind == "randint":
        return r.randint(key, shape, 0, extra[0], dtype=jnp.int64)
    raise NotImplementedError(kind)


def _draw(kind, key, shape, extra=None):
    """One key's draw, compiled once per (kind, shape)."""
    name = ("one", kind, tuple(shape), extra)
    if name not in _FN:
        jax, _ = jax_modules()
        _FN[name] = jax.jit(lambda k: _sampler(kind, k, tuple(shape), extra))
    return _FN[name](key)


def _draw_blocks(kind, keys, shape, extra=None):
    """Each block's draw of ``shape`` from its own key, stacked."""
    name = ("blocks", kind, tuple(shape), extra)
    if name not in _FN:
        jax, _ = jax_modules()
        _FN[name] = jax.jit(jax.vmap(lambda k: _sampler(kind, k, tuple(shape), extra)))
    return _FN[name](keys)


def as_device(xp, a):
    """``a`` on the backend of ``xp`` (no copy for numpy)."""
    return a if xp is np or a is None else xp.asarray(a)


def to_numpy(a):
    return a if isinstance(a, np.ndarray) else np.asarray(a)


__all__ = ["BACKENDS", "BackendUnavailable", "DeviceGenerator", "add_at", "as_device",
           "backend_of", "check_backend", "device_name", "jax_modules", "on_backend",
           "one_hot", "supports", "to_numpy", "xp_of"]
