"""The JSON text of the tool's documents (``audit-result/1``, the regret
document, ``audit-history/1`` and the store's copies of results): strict
JSON, with one convention for the numbers JSON cannot write.

JSON has no NaN or infinity (Python's ``json`` writes the non-standard
tokens ``NaN`` and ``Infinity``, which strict parsers reject).  Every
document goes through ``dumps``, which writes

* +∞ as the string ``"inf"`` and −∞ as the string ``"-inf"`` (an
  infinite ε lower bound, an output impossible on one side), and
* NaN as ``null`` (an undefined quantity: a loss of an output impossible on
  the numerator side, a bound that was not computed),

anywhere in the document, then serialises with ``allow_nan=False``, so no
path can write a ``NaN`` or ``Infinity`` token.  The strings ``"inf"`` and
``"-inf"`` are reserved for the infinities: no text field of a document is
ever exactly one of them.  numpy scalars are written as Python numbers,
arrays and tuples as lists, and any other object as its ``repr`` string.

``loads``/``load`` read a document back: ``"inf"`` and ``"-inf"`` become
floats again and ``null`` stays None, so a document read back equals the
one written except that NaN reads as None.  They also accept documents
written before this convention (with the ``NaN``/``Infinity`` tokens).

May import: nothing from the project (``json``, ``math``, numpy).
"""
from __future__ import annotations

import json
import math

import numpy as np

INF, NEG_INF = "inf", "-inf"


def encode(obj):
    """``obj`` with every non-finite float replaced as documented (a new
    object; ``obj`` is not changed)."""
    if isinstance(obj, dict):
        return {_key(k): encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return encode(obj.tolist())
    if isinstance(obj, np.generic):
        return encode(obj.item())
    if isinstance(obj, (str, bool, int)) or obj is None:
        return obj
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return INF if obj > 0 else NEG_INF
        return obj
    try:
        return encode(float(obj))
    except (TypeError, ValueError):
        return repr(obj)


def _key(k):
    """A mapping key as JSON writes it (a string), infinities as above."""
    if isinstance(k, (float, np.floating)) and not math.isfinite(k):
        return "nan" if math.isnan(k) else (INF if k > 0 else NEG_INF)
    return k if isinstance(k, (str, int, float, bool)) or k is None else str(k)


def decode(obj):
    """A parsed document with ``"inf"``/``"-inf"`` read back as floats."""
    if isinstance(obj, dict):
        return {k: decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    if obj == INF:
        return math.inf
    if obj == NEG_INF:
        return -math.inf
    return obj


def dumps(doc, **kwargs) -> str:
    """Strict JSON text of ``doc`` (keyword arguments go to ``json.dumps``)."""
    return json.dumps(encode(doc), allow_nan=False, **kwargs)


def loads(text: str):
    return decode(json.loads(text))


def load(fh):
    return decode(json.load(fh))
