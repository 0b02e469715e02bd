"""numpy as it was imported, for the trace's own code.

While a run of continuous noise is traced, some of numpy's functions are
replaced by ones that see noisy values (``paths._lifted_numpy``:
``np.asarray``, ``np.zeros``, …).  The trace's own modules — which call
those functions hundreds of thousands of times per audit on plain arrays —
use this copy of numpy's namespace, taken at import, so they pay nothing
for the replacement.

May import: numpy.
"""
import types

import numpy

np = types.ModuleType("numpy")
np.__dict__.update(numpy.__dict__)
