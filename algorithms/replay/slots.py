"""Float arrays the traced code makes for itself (``np.zeros(k)``,
``np.full``, ``np.empty``, ``np.ones`` and their ``_like`` forms), so that
noisy values stored into them stay noisy.

A plain float array turns a noisy value assigned into it into a double:
report-noisy-max written ``noisy = np.zeros(k); noisy[i] = q[i] +
rng.laplace(…); return np.argmax(noisy)`` would compare numbers the trace no
longer follows.  While a run is traced those functions return a ``Slots``:
an ordinary float array until a noisy value is stored in it; from then on
it keeps a ``Noisy`` twin of itself (``_noisy_twin``) holding every
element's form, and reads, numpy functions, ufuncs and the usual methods go
through the twin.  Its own buffer keeps this run's concrete values.

Nothing here is trusted: a use the twin does not see (a view written
through, a C routine reading the buffer) gives outputs that re-execution on
plain values contradicts, and the trace is refused (``paths.confirm``).

May import: numpy, ``algorithms.replay.noise``.
"""
from __future__ import annotations

from algorithms.replay.plain_numpy import np

from algorithms.replay.noise import has_noisy, lift, through, twin

MAKERS = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like")
# methods that read the twin once a noisy value is stored
DELEGATED = ("argmax", "argmin", "max", "min", "sum", "mean", "cumsum", "copy", "tolist",
             "item", "round", "clip", "dot", "astype", "ravel", "flatten", "reshape",
             "__iter__", "__float__", "__int__", "__index__", "__bool__",
             "__repr__", "__str__", "__format__", "__abs__", "__neg__")


def _unwrapped_leaf(x):
    if isinstance(x, Slots):
        t = twin(x)
        return t if t is not None else x.view(np.ndarray)
    return x


def _unwrapped(x):
    """Arguments for numpy: twins for slots holding noise, plain arrays for
    the others, through lists, tuples and dicts."""
    return through(x, _unwrapped_leaf)


def _wrapped(x):
    """A float result made from slots is a slot array again (noise may be
    stored into it next)."""
    if type(x) is np.ndarray and x.dtype.kind == "f":
        return x.view(Slots)
    return x


class Slots(np.ndarray):
    """A traced run's own float array (module docstring)."""

    _noisy_twin = None

    def __array_finalize__(self, obj):
        self._noisy_twin = None             # views and copies start plain

    def __setitem__(self, key, value):
        value = _unwrapped(value)
        t = self._noisy_twin
        if t is None and not has_noisy(value):
            return super().__setitem__(key, value)
        if t is None:
            t = self._noisy_twin = lift(self.view(np.ndarray).copy())
        t[key] = value
        # on a plain view: numpy reads a slice target through __getitem__,
        # which here returns the twin
        self.view(np.ndarray)[key] = t[key].values

    def __getitem__(self, key):
        t = self._noisy_twin
        return super().__getitem__(key) if t is None else t[key]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        got = getattr(ufunc, method)(*_unwrapped(inputs), **_unwrapped(kwargs))
        if out is None:
            return _wrapped(got)
        for o in out:                       # an in-place operation (+=, out=)
            o[...] = got
        return out[0] if len(out) == 1 else out

    def __array_function__(self, func, types, args, kwargs):
        return _wrapped(func(*_unwrapped(args), **_unwrapped(kwargs)))

    def fill(self, value):
        self[...] = value

    def sort(self, axis=-1, **kwargs):
        t = self._noisy_twin
        if t is None:
            return super().sort(axis, **kwargs)
        self[...] = np.sort(t, axis=axis)


def _delegate(name):
    plain = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        t = self._noisy_twin
        if t is None:
            return plain(self, *args, **kwargs)
        return getattr(t, name)(*args, **kwargs)
    method.__name__ = name
    return method


for _name in DELEGATED:
    setattr(Slots, _name, _delegate(_name))


# arguments a maker takes as they are (a shape, a dtype, a fill value, a
# plain prototype): no walk over them
_SHAPES = frozenset({int, float, bool, np.int64, np.float64, type(None), str, np.dtype, type,
                     np.ndarray})


def making(original):
    """``original`` (a numpy array maker) returning ``Slots`` for float arrays."""
    def made(*args, **kwargs):
        if any(type(a) not in _SHAPES for a in args) or \
                any(type(v) not in _SHAPES for v in kwargs.values()):
            args, kwargs = _unwrapped(args), _unwrapped(kwargs)
        got = original(*args, **kwargs)
        return _wrapped(got)
    made.__name__ = getattr(original, "__name__", "made")
    return made
