"""The DP testers' own benchmark, side by side with DP-Sniper's published figures.

Every mechanism of the suite DP-Sniper and StatDP are measured on, as an
online algorithm over its stream of query answers (``algorithms.dp_testers``),
is audited twice with its default attacks (the suite's input patterns for
the claim's neighbouring relation, the optimised pair where a declared model
gives an exact pair ε, the stream search, learned witnesses), and the two
kinds of evidence are kept apart:

* black-box: ``--mode black-box`` only, at 90% confidence (the testers'
  level): a calibration audit of every pair, then the pair it chose audited
  alone (below): the pair, our ε_lb, the final audit's runs per side, the
  samples both audits used (runs of both sides of every pair audited and
  the witnesses' training runs, summed) and their wall time together;
* exact: the white-box modes only (``integral``, ``pld``, ``replay``), the largest ε_lb
  with no statistical error, the pair it was attained on (``optimised``:
  the pair maximising the exact pair ε of the declared model or of the
  replayed code, printed below the table with the command that reruns it),
  and the wall time; "-" where no exact evidence applies (a finite law's
  ``pld`` bound is statistical).

Printed per mechanism beside them: the true ε (derived or cited:
``Algorithm.extra["true_epsilon_source"]``; "-" where the source only says it
is not ε-DP for any finite ε as the queries grow and no closed form exists)
and DP-Sniper's published ε_lb at 90%, and the mechanism's total wall time
(the black-box audits' plus the exact audit's).  The closing lines
count the exact audits reaching 0.99 of the true ε where it is known, the
mechanisms where either kind beats DP-Sniper, the black-box wins at
≤ 2·10⁷ samples and under 60 s (the like-with-like comparison: DP-Sniper's
figure rests on 2·10⁸ samples), and the mechanisms whose total is under
60 s.

The final black-box audit runs on coupled runs (``--runs coupled``, the
default: ``audit run --coupled``, both sides of each block of runs from
one seed, one test of the blocks' counts —
``audit.engine.evidence.coupled``); ``--runs independent`` gives the
previous protocol.  It is still black-box evidence: it reads only the
mechanism's outputs, and holds whatever the code does with its seed.

The black-box audit, like DP-Sniper's final estimate, tests one pair: a
full audit divides its runs and its 10% error among 4 to 11 pairs, and a
pair found by the search is worth its own runs.  A calibration audit of
every pair at ``--trials`` runs per side (seed S) chooses it: the
``optimised`` pair where a declared model gives one (the pair of largest
exact pair ε its optimiser found; at a few hundred thousand runs the
calibration cannot tell pairs a few percent apart), else the pair with the
calibration's largest ε_lb (on coupled runs, a mechanism with an
``optimised`` pair skips the calibration, which would not change the
choice, and its columns print "-").  The final audit tests that pair alone
(``--pair``) at the same seed: an audit of some pairs draws from streams
of its own (``audit.engine.sampling.pairs_namespace``), so its runs are
independent of the calibration's that chose the pair and its bound is an
ordinary 90% bound, and the stream search builds the same pairs as in the
calibration.  ``audit run NAME --pair LABEL --mode black-box --trials N
--confidence 0.9 --seed S`` reproduces it (printed below the table).  Its
budget: a timing audit of the pair alone at ``--trials`` runs (1.3·10⁶ on
coupled runs, the least budget whose blocks have the final audit's size,
512, so its cost per run is the final's; same seed and labels;
neither its time nor its runs are counted) splits its wall time into
the counting of the runs (∝ the runs per side), the witness's training
(∝ its training runs, ``audit.engine.witness.training_runs``) and the rest
(building the pairs, the stream search's pilot: fixed), and the final
audit is run at the most runs per side (rounded down to two significant
digits) whose projected time stays within what the calibration left of
``--seconds`` and whose samples, plus the witness's training runs, stay
within what it left of ``--max-samples``.  The samples column counts the
runs of both sides of every pair of both audits (selection and test
halves) and the witnesses' training runs (a tenth of the audit's runs a
side, 20 000 to 100 000, ``audit.engine.witness.training_runs``); not
counted are the stream search's pilot runs and the events' pilots, which
build the pairs and their events (DP-Sniper's 2·10⁸ counts the samples of
its final estimate alone).  The time column is both audits'
wall time.  Same seed, same runs per side → same ε_lb; the runs per side
themselves depend on the machine's speed and load wherever the time limit,
not the samples limit, sets them.

Published figures: Bichsel, Steffen, Bogunovic & Vechev, "DP-Sniper:
Black-Box Discovery of Differential Privacy Violations using Classifiers",
IEEE S&P 2021, reference results of its artifact (github.com/eth-sri/
dp-sniper, eval_sp2021/reference-results), logistic regression, a final
estimate from 2·10⁸ samples, claimed ε = 0.1, after 18–341 s of search.

    python benchmarks/testers.py [--trials 200000] [--seconds 55] [--max-samples 20000000]
                                 [--runs coupled|independent] [--jobs 2] [--seed 0]
                                 [--only laplace,svt1]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from algorithms import build  # noqa: E402
from audit.engine.audit import audit_algorithm  # noqa: E402
from audit.engine.evidence import WHITE_MODES  # noqa: E402
from audit.engine.witness import training_runs  # noqa: E402
from audit.execution.progress import Phase, Reporter  # noqa: E402

# DP-Sniper's published ε_lb at 90% (logistic regression; see the docstring).
DP_SNIPER = {
    "laplace": 0.0968, "truncated-geometric": 0.1156, "noisy-hist1": 0.0978,
    "noisy-hist2": 4.602, "report-noisy-max1": 0.0923, "report-noisy-max2": 0.0975,
    "report-noisy-max3": 0.2478, "report-noisy-max4": 0.3463, "svt1": 0.0858, "svt2": 0.0859,
    "svt3": 0.1716, "svt4": 0.1687, "svt5": 1.761, "svt6": 0.2720, "rappor": 0.2930,
    "one-time-rappor": 0.5978, "laplace-parallel": 0.0350, "svt34-parallel": 0.2610,
    "prefix-sum": 0.5040, "numerical-svt": 0.0343,
}
ORDER = list(DP_SNIPER) + ["binary-counter", "smart-sum"]
CONFIDENCE = 0.90
REACHED = 0.99          # an exact audit "reaches" the true ε at this fraction of it
TARGET_SAMPLES = 20_000_000   # the target: a black-box win at ≤ 2·10⁷ samples …
COUPLED_TIMING = 1_300_000    # runs a side of the coupled timing audit: blocks of 512 from here on
TARGET_SECONDS = 60.0         # … and under 60 s (also the limit on a mechanism's total)


SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt(x) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "∞"
    return f"{x:.4f}"


class _TimedPhase(Phase):
    def close(self, completed: bool = True) -> None:
        if not self.closed:
            spent = self.reporter.seconds
            spent[self.name] = spent.get(self.name, 0.0) + self.reporter.clock() - self.start
        super().close(completed)


class PhaseClock(Reporter):
    """A silent progress reporter that keeps each phase's wall time."""

    def __init__(self):
        super().__init__(enabled=False, clock=time.perf_counter)
        self.seconds: dict = {}

    def phase(self, name: str, total: int, unit: str = "runs",
              quiet_below: float = 0.0) -> Phase:
        return _TimedPhase(self, name, total, unit, quiet_below)


@dataclass
class BlackBox:
    """One black-box audit: its ε_lb, runs per side, samples (both sides of
    every pair), the witness's training runs (both sides), its wall time and
    the parts of it spent counting runs and training witnesses; its pairs'
    labels, best first (by ε_lb)."""
    epsilon: float
    trials: int
    samples: int
    training: int
    seconds: float
    counting: float
    pilots: float
    labels: list


def black_box_at(alg, args, trials: int, seed: int, pairs=None, coupled=False) -> BlackBox:
    """The black-box audit alone at 90% and ``trials`` runs per side, on
    every pair of the default attacks or on ``pairs`` (labels) alone, on
    independent or ``coupled`` runs."""
    clock = PhaseClock()
    t0 = time.perf_counter()
    r = audit_algorithm(alg, trials=trials, confidence=CONFIDENCE, seed=seed,
                        jobs=args.jobs, modes=["black-box"], progress=clock, pairs=pairs,
                        coupled=coupled, backend=getattr(args, "backend", "numpy"))
    seconds = time.perf_counter() - t0
    bb = [x for x in r.results if x.kind == "black-box"]
    samples = sum(2 * x.trials for x in bb)
    training = sum(sum(x.witness["training_runs_per_side"]) for x in bb if x.witness)
    counting = sum(v for k, v in clock.seconds.items()
                   if k.startswith(("black-box ", "coupled pilot ")))
    pilots = sum(v for k, v in clock.seconds.items()
                 if k.startswith(("witness training ", "release events pilot ")))
    labels = [x.label for x in sorted(bb, key=lambda x: -x.epsilon_lower_bound)]
    return BlackBox(r.epsilon_lower_bound, trials, samples, training, seconds, counting, pilots,
                    labels)


# The calibration of a mechanism whose optimised pair is taken without one.
NO_CALIBRATION = BlackBox(math.nan, 0, 0, 0, 0.0, 0.0, 0.0, ["optimised"])


def round_down(n: float) -> int:
    """``n`` rounded down to two significant digits."""
    n = int(n)
    if n < 100:
        return n
    step = 10 ** (len(str(n)) - 2)
    return n // step * step


def budget(cal: BlackBox, seconds: float, max_samples: int) -> int:
    """Runs per side for the final black-box audit, projected from the
    timing audit ``cal``: the most (two significant digits) whose projected
    wall time is ≤ ``seconds`` and whose samples plus training runs are
    ≤ ``max_samples``; fewer than ``cal.trials`` only where its own runs do
    not fit (down to a tenth of them)."""
    t0 = cal.trials
    fixed = max(0.0, cal.seconds - cal.counting - cal.pilots)

    def cost(t):
        return (fixed + cal.counting * t / t0
                + cal.pilots * training_runs(t) / training_runs(t0))

    def samples(t):
        return cal.samples * t / t0 + cal.training * training_runs(t) / training_runs(t0)

    if not cal.samples:
        return t0
    if cost(t0) > seconds or samples(t0) > max_samples:
        # The timing audit itself was too long (coupled runs are timed at
        # 1.3·10⁶ runs a side): fewer runs, never below a tenth of it.
        lo, hi = max(2, t0 // 10), t0
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if cost(mid) <= seconds and samples(mid) <= max_samples else (lo, mid)
        return round_down(lo)
    lo, hi = t0, t0
    while cost(hi) <= seconds and samples(hi) <= max_samples:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:                      # both are monotone in t
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if cost(mid) <= seconds and samples(mid) <= max_samples else (lo, mid)
    return max(t0, round_down(lo))


@dataclass
class Focused:
    """The black-box result of one mechanism: the calibration (every pair),
    the pair it chose and the final audit of that pair alone; samples and
    seconds are both audits' together."""
    cal: BlackBox
    pair: str
    final: BlackBox
    seed: int

    @property
    def samples(self) -> int:
        """Both audits' runs, the witnesses' training runs included."""
        return self.cal.samples + self.cal.training + self.final.samples + self.final.training

    @property
    def seconds(self) -> float:
        return self.cal.seconds + self.final.seconds


def choose_pair(alg, args, cal: BlackBox) -> tuple:
    """(label, timing audit) of the pair the final audit tests alone:
    ``optimised`` where a declared model gives it (the pair of largest exact
    pair ε its optimiser found; the calibration's ranking, at a few hundred
    thousand runs, cannot tell pairs a few percent apart), else the
    calibration's best.  The final audit, a ``--pair`` audit, draws from
    streams of its own, so its runs are independent of the calibration's
    that chose the pair (same seed: the search builds the same pairs); a
    label refused all the same is skipped for the next best."""
    order = (["optimised"] if "optimised" in cal.labels else []) + cal.labels
    coupled = args.runs == "coupled"
    # Coupled runs come in blocks whose size grows with the budget (their
    # per-call cost falls): timed at the least budget with the final's blocks.
    trials = max(args.trials, COUPLED_TIMING) if coupled else args.trials
    for label in dict.fromkeys(order):
        try:
            return label, black_box_at(alg, args, trials, args.seed, pairs=[label],
                                       coupled=coupled)
        except ValueError:
            continue
    raise ValueError(f"{alg.name}: no pair of the calibration is built again at seed "
                     f"{args.seed}")


def black_box(alg, args) -> Focused:
    """The calibration on every pair at ``--trials`` runs per side, then the
    chosen pair alone (``choose_pair``) at the budget its timing audit (the
    same pair at ``--trials``, 1.3·10⁶ on coupled runs) projects (``budget``)
    within what the calibration left of ``--seconds`` and
    ``--max-samples``.  On coupled runs, where an ``optimised`` pair exists
    the calibration is skipped (it would choose that pair anyway)."""
    cal = None
    if args.runs == "coupled":
        # Where the optimiser gives a pair, the calibration would only be
        # shown (the final audit takes ``optimised`` whatever it ranks
        # first): it is skipped, and its time goes to the final audit.
        try:
            timing = black_box_at(alg, args, max(args.trials, COUPLED_TIMING), args.seed,
                                  pairs=["optimised"], coupled=True)
            label, cal = "optimised", NO_CALIBRATION
        except ValueError:
            pass
    if cal is None:
        cal = black_box_at(alg, args, args.trials, args.seed)
        label, timing = choose_pair(alg, args, cal)
    trials = budget(timing, args.seconds - cal.seconds,
                    args.max_samples - cal.samples - cal.training)
    final = timing if trials == timing.trials else black_box_at(
        alg, args, trials, args.seed, pairs=[label], coupled=args.runs == "coupled")
    return Focused(cal, label, final, args.seed)


def exact(alg, args):
    """(ε_lb, the pair's label, its white-box result, the best statistical
    white-box ε_lb or None, seconds) of the white-box modes alone: only
    results with no statistical error count as exact; (None, '', None, …)
    where none applies."""
    t0 = time.perf_counter()
    try:
        r = audit_algorithm(alg, trials=args.trials, confidence=CONFIDENCE, seed=args.seed,
                            jobs=args.jobs, modes=list(WHITE_MODES))
    except ValueError:
        return None, "", None, None, time.perf_counter() - t0
    white = [x for x in r.results if x.kind in WHITE_MODES]
    stat = [x.per_record_lower_bound for x in white if not x.exact]
    found = [x for x in white if x.exact]
    stat_best = max(stat) if stat else None
    if not found:
        return None, "", None, stat_best, time.perf_counter() - t0
    best = max(found, key=lambda x: x.per_record_lower_bound)
    return (best.per_record_lower_bound, best.attack, best, stat_best,
            time.perf_counter() - t0)


def reached(value, true) -> bool:
    if value is None or true is None:
        return False
    if math.isinf(true):
        return math.isinf(value)
    return value >= REACHED * true


def fmt_count(n: int) -> str:
    """A sample count: exact below 10⁶, else rounded down to two significant
    digits (1.6·10⁶)."""
    if n < 1_000_000:
        return str(n)
    k = len(str(int(n))) - 1
    return f"{math.floor(10 * n / 10 ** k) / 10:.1f}·10{str(k).translate(SUPERSCRIPT)}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200_000,
                    help="runs per side of the black-box calibration and of the exact audits "
                         "(default %(default)s)")
    ap.add_argument("--seconds", type=float, default=55.0,
                    help="wall time the black-box calibration and (projected) final audit "
                         "may take together (default %(default)s)")
    ap.add_argument("--max-samples", type=int, default=TARGET_SAMPLES,
                    help="samples (both sides of every pair, plus the witness's training runs) "
                         "the black-box calibration and final audit may use together "
                         "(default %(default)s)")
    ap.add_argument("--runs", choices=("coupled", "independent"), default="coupled",
                    help="the final black-box audit's runs: coupled (both sides of a block "
                         "from one seed, audit run --coupled) or independent "
                         "(default %(default)s)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated mechanism names")
    ap.add_argument("--backend", choices=("numpy", "jax"), default="numpy",
                    help="where the black-box audits run (audit run --backend; with jax, "
                         "give --trials, --seconds and --max-samples to match the device) "
                         "(default %(default)s)")
    args = ap.parse_args(argv)
    if args.backend != "numpy":
        from algorithms.backend import check_backend, device_name
        check_backend(args.backend)
        print(f"black-box audits on {args.backend} ({device_name()})")
    names = [n for n in args.only.split(",") if n] or ORDER
    unknown = [n for n in names if n not in ORDER]
    if unknown:
        ap.error(f"--only: unknown mechanism {unknown[0]!r}; choose from: {', '.join(ORDER)}")
    print(f"DP testers' benchmark: seed {args.seed}, {args.jobs} jobs, 90% confidence; "
          f"black-box calibrated on every pair at {args.trials} runs per side, then one pair "
          f"alone, up to {args.seconds:g} s and {args.max_samples} samples in all; exact at "
          f"{args.trials} runs per side; DP-Sniper: published ε_lb at 90% (2·10⁸ samples)")
    head = (f"{'mechanism':21s} {'true ε':>7s} │ {'cal ε_lb':>8s} {'cal s':>6s} │ "
            f"{'pair':30s} {'black-box':>9s} {'per side':>8s} {'samples':>8s} {'s':>6s} │ "
            f"{'exact':>7s} {'/true':>6s} {'attained on':30s} {'s':>6s} │ {'total s':>7s} │ "
            f"{'DP-Sniper':>9s}")
    print(f"{'':21s} {'':7s} │ {'calibration':^15s} │ {'black-box ε_lb, 90%: the pair alone':^66s} │ "
          f"{'exact ε_lb (no statistical error)':^53s} │ {'':7s} │")
    print(head)
    print("-" * len(head))
    known = reached_names = 0
    reached_list, short_list = [], []
    bb_wins = ex_wins = compared = 0
    target_wins, slow = [], []
    totals = {}
    optimised_pairs, statistical, focused = [], [], []
    for name in names:
        alg = build(name)
        true = alg.extra.get("true_epsilon")
        bb = black_box(alg, args)
        cal = bb.cal
        focused.append(f"{name}: black-box ε_lb {fmt(bb.final.epsilon)} on {bb.pair}; reproduce: "
                       f"audit run {name} --pair {bb.pair} --mode black-box"
                       f"{' --coupled' if args.runs == 'coupled' else ''}"
                       f"{'' if args.backend == 'numpy' else ' --backend ' + args.backend} --trials "
                       f"{bb.final.trials} --confidence {CONFIDENCE:g} --seed {bb.seed}")
        ex, where, result, stat, ex_s = exact(alg, args)
        total = bb.seconds + ex_s
        totals[name] = (total, bb.seconds, ex_s)
        if total >= TARGET_SECONDS:
            slow.append(f"{name} {total:.1f} s")
        if ex is None and stat is not None:
            statistical.append(f"{name} {fmt(stat)}")
        theirs = DP_SNIPER.get(name)
        if theirs is not None:
            compared += 1
            bb_wins += bb.final.epsilon > theirs
            ex_wins += ex is not None and ex > theirs
            if (bb.final.epsilon > theirs and bb.samples <= TARGET_SAMPLES
                    and bb.seconds < TARGET_SECONDS):
                target_wins.append(name)
        ratio = ("" if ex is None or true is None or not true or math.isinf(true)
                 else f"{ex / true:.3f}")
        if true is not None:
            known += 1
            if reached(ex, true):
                reached_names += 1
                reached_list.append(name)
            else:
                short_list.append(name)
        if where == "optimised" and result is not None:
            pair = [n for n in result.notes if n.startswith("the optimised pair")]
            optimised_pairs.append((name, pair[0] if pair else "", result.event, result.kind))
        cal_eps, cal_s = ((fmt(cal.epsilon), f"{cal.seconds:.1f}") if cal.trials else ("-", "-"))
        print(f"{name:21s} {fmt(true):>7s} │ {cal_eps:>8s} {cal_s:>6s} │ "
              f"{bb.pair[:30]:30s} {fmt(bb.final.epsilon):>9s} {fmt_count(bb.final.trials):>8s} "
              f"{fmt_count(bb.samples):>8s} {bb.seconds:>6.1f} │ "
              f"{fmt(ex):>7s} {ratio:>6s} {where[:30]:30s} {ex_s:>6.1f} │ {total:>7.1f} │ "
              f"{fmt(theirs):>9s}", flush=True)
    print(f"exact audits reaching {REACHED:g} × the true ε (where known): {reached_names} of "
          f"{known}" + (f" ({', '.join(reached_list)})" if reached_list else "")
          + (f"; below: {', '.join(short_list)}" if short_list else ""))
    print(f"higher than DP-Sniper's published ε_lb at 90%: black-box {bb_wins} of {compared}, "
          f"exact {ex_wins} of {compared}")
    print(f"black-box higher than DP-Sniper's ε_lb (2·10⁸ samples) at ≤ "
          f"{fmt_count(TARGET_SAMPLES)} samples and under {TARGET_SECONDS:g} s: "
          f"{len(target_wins)} of {compared}"
          + (f" ({', '.join(target_wins)})" if target_wins else ""))
    print(f"mechanisms whose total wall time (black-box calibration and final audit + exact) "
          f"is under {TARGET_SECONDS:g} s: {len(names) - len(slow)} of {len(names)}"
          + (f"; not: {', '.join(slow)}" if slow else ""))
    if "svt3" in totals:
        total, bb_s, ex_s = totals["svt3"]
        print(f"svt3: {total:.1f} s in all (black-box {bb_s:.1f} s, exact {ex_s:.1f} s): "
              f"{'under' if total < TARGET_SECONDS else 'not under'} {TARGET_SECONDS:g} s")
    if statistical:
        print(f"white-box bounds that are statistical, not exact (90%; a finite law's table "
              f"bounded from the runs): {', '.join(statistical)}")
    for line in focused:
        print(line)
    for name, pair, event, kind in optimised_pairs:
        print(f"{name}: {pair}; {event}; reproduce: audit run {name} --attack optimised "
              f"--mode {kind} --seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
