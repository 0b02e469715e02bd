"""Per-run reference implementations of the DP testers' benchmark
mechanisms (``algorithms.dp_testers``), plain loops written from their
sources' definitions.  They draw from the random stream in the order the
vectorised learners do with one run (see ``algorithms.dp_testers.mechanisms``)."""
from __future__ import annotations


def ref_noisy_release(answers, b, copies=1, prefix=False, rng=None):
    """Each round: its answer(s), each repeated ``copies`` times, plus
    Laplace(b); the output is the release, or the running sum of releases."""
    out, total = [], None
    for row in answers:
        noise = rng.laplace(0.0, b, (1, len(row) * copies))[0]
        y = [v for v in row for _ in range(copies)]
        y = [y[i] + noise[i] for i in range(len(y))]
        total = y if total is None else [total[i] + y[i] for i in range(len(y))]
        out.append(list(total) if prefix else y)
    return out


def ref_geometric(count, cdf, rng):
    """GeoSample: the smallest z with F(z) ≥ u, u uniform on {1, …, F(n)}."""
    u = int(rng.integers(1, cdf[-1] + 1, size=1)[0])
    for z, f in enumerate(cdf):
        if f >= u:
            return z
    raise AssertionError("F(n) = d bounds every u")


def ref_noisy_max(row, b, noise, report, rng):
    z = (rng.laplace(0.0, b, (1, len(row))) if noise == "laplace"
         else rng.exponential(b, (1, len(row))))[0]
    v = [row[i] + z[i] for i in range(len(row))]
    best = 0
    for i in range(1, len(v)):
        if v[i] > v[best]:
            best = i
    return best if report == "index" else v[best]


class RefSparseVector:
    """Lyu, Su & Li's sparse vector, one run: ⊤ iff q + ν ≥ T + ρ."""

    def __init__(self, threshold, rho_scale, nu_scale, cutoff=None, resample=False,
                 numeric=None, numeric_scale=None):
        self.T, self.b_rho, self.b_nu = threshold, rho_scale, nu_scale
        self.cutoff, self.resample = cutoff, resample
        self.numeric, self.numeric_scale = numeric, numeric_scale

    def start(self, rng):
        self.rho = rng.laplace(0.0, self.b_rho, 1)[0]
        self.count, self.aborted = 0, False

    def step(self, q, rng):
        nu = rng.laplace(0.0, self.b_nu, 1)[0] if self.b_nu > 0 else 0.0
        fresh = q + rng.laplace(0.0, self.numeric_scale, 1)[0] if self.numeric == "fresh" else 0.0
        cand = rng.laplace(0.0, self.b_rho, 1)[0] if self.resample else None
        if self.aborted:
            return 2, 0.0
        above = q + nu >= self.T + self.rho
        value = 0.0
        if above:
            value = (q + nu if self.numeric == "same" else fresh) if self.numeric else 0.0
            self.count += 1
            if self.resample:
                self.rho = cand
        if self.cutoff is not None and self.count >= self.cutoff:
            self.aborted = True
        return (1 if above else 0), value


def ref_rappor(bits, f, p, q, rng):
    """One report: the permanent response (keep with probability 1 − f, else a
    fair coin), then, with p and q, the instantaneous one."""
    u = rng.random((1, len(bits)))[0]
    perm = [1.0 if u[i] < f / 2 else 0.0 if u[i] < f else bits[i] for i in range(len(bits))]
    if p is None:
        return perm
    v = rng.random((1, len(bits)))[0]
    return [1.0 if v[i] < (q if perm[i] == 1.0 else p) else 0.0 for i in range(len(bits))]


def ref_binary_counter(xs, b, rng):
    """The Binary Mechanism: α̂_j for the block of size 2^j ending at t (2^j
    the lowest set bit of t); the count at t sums the latest α̂_j over the
    bits j of t."""
    nodes, counts = {}, []
    for t in range(1, len(xs) + 1):
        size = t & -t
        j = size.bit_length() - 1
        alpha = sum(xs[t - size:t]) + rng.laplace(0.0, b, 1)[0]
        nodes = {k: v for k, v in nodes.items() if k > j}
        nodes[j] = alpha
        counts.append(sum(v for k, v in nodes.items() if (t >> k) & 1))
    return counts


def ref_smart_sum(xs, b, block, rng):
    total, nxt, acc, out = 0.0, 0.0, 0.0, []
    for i, x in enumerate(xs):
        eta = rng.laplace(0.0, b, 1)[0]
        if (i + 1) % block == 0:
            total = total + acc + x + eta
            nxt, acc = total, 0.0
        else:
            nxt, acc = nxt + x + eta, acc + x
        out.append(nxt)
    return out
