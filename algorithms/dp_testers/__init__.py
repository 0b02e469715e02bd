"""The DP testers' benchmark suite (DP-Sniper, StatDP): mechanisms over a
stream of query answers, with their claims and true privacy parameters."""
from __future__ import annotations

from ..entry import Entry
from . import catalog as c

E = dict(arms=1)
ENTRIES: list = [
    Entry("laplace", c.make_laplace, "Laplace(1/eps) on one answer (true eps = eps)",
          horizon=1, epsilon=0.1, **E),
    Entry("gaussian", c.make_gaussian, "Gaussian N(0, sigma^2) on one answer, claimed "
          "mu-GDP, mu = 1/sigma (its exact curve)", horizon=1, epsilon=None, **E),
    Entry("truncated-geometric", c.make_truncated_geometric,
          "Balcer-Vadhan GeoSample, k = ceil(ln(2/eps)) as the suite (true eps = ln(9/8))",
          horizon=1, epsilon=0.1, **E),
    Entry("noisy-hist1", c.make_noisy_hist1, "noisy histogram, Laplace(1/eps) (true eps = eps)",
          horizon=5, epsilon=0.1, **E),
    Entry("noisy-hist2", c.make_noisy_hist2, "noisy histogram, Laplace(eps) (true eps = 1/eps)",
          horizon=5, epsilon=0.1, **E),
    *[Entry(f"report-noisy-max{i}", c.RNM_FACTORIES[i],
            f"report noisy max, {c.RNM[i][0]} noise, reports the {c.RNM[i][1]} (true eps = "
            + {1: "eps", 2: "eps", 3: "5 eps/2", 4: "inf"}[i] + ")",
            horizon=1, arms=5, epsilon=0.1) for i in range(1, 5)],
    *[Entry(f"svt{i}", c.SVT_FACTORIES[i],
            f"sparse vector, Lyu et al. Alg {i} (true eps: "
            + {1: "eps", 2: "eps", 3: "not eps-DP", 4: "(1+6c)/4 eps", 5: "inf",
               6: "not eps-DP"}[i] + ")", horizon=10, epsilon=0.1, **E) for i in range(1, 7)],
    Entry("numerical-svt", c.make_numerical_svt, "numerical sparse vector (true eps = eps)",
          horizon=10, epsilon=0.1, **E),
    Entry("rappor", c.make_rappor, "RAPPOR, one report (true eps = its eps1 = 0.4)",
          horizon=1, epsilon=None, **E),
    Entry("one-time-rappor", c.make_one_time_rappor,
          "one-time RAPPOR (true eps = its eps_inf = 0.8)", horizon=1, epsilon=None, **E),
    Entry("laplace-parallel", c.make_laplace_parallel,
          "20 Laplace(20/eps) copies of one answer (true eps = eps)", horizon=1, epsilon=0.1, **E),
    Entry("svt34-parallel", c.make_svt34_parallel, "SVT3 and SVT4 in parallel, c = 2 "
          "(not 2 eps-DP)", horizon=10, epsilon=0.1, **E),
    Entry("prefix-sum", c.make_prefix_sum, "prefix sums of Laplace(1/eps) answers (true eps = "
          "T eps)", horizon=10, epsilon=0.1, **E),
    Entry("binary-counter", c.make_binary_counter, "continual counting, binary tree mechanism "
          "(true eps = eps)", horizon=16, epsilon=0.1, **E),
    Entry("smart-sum", c.make_smart_sum, "continual counting, two-level SmartSum (true eps = "
          "2 eps)", horizon=16, epsilon=0.1, **E),
]
