"""``audit run``: audit one algorithm against its claim, print the verdict,
optionally write the result document and a report.

May import: ``algorithms``, ``attacks``, ``audit.execution``, ``audit.engine``,
``audit.report``, ``audit.cli.common``.
"""
from __future__ import annotations

from algorithms.core import Claim
from audit.cli.common import (EXIT_OK, EXIT_VIOLATION, add_algorithm_options, check_attack_applies,
                              add_execution_options, auto_prune, build_algorithm,
                              check_output_dir, check_writable, data_independence_warning, dedupe,
                              execution, history_name, note_kept_chunks, number, one_line,
                              positive_int, UsageError, write_json_atomic)


def add_run_parser(sub):
    p = sub.add_parser("run", help="audit an algorithm against its privacy claim",
                       description="Audit one algorithm against its privacy claim: black-box "
                                   "on every attack's neighbouring pairs, plus the white-box "
                                   "modes that apply.  Exit 0 consistent, 1 violation, 2 bad "
                                   "input, 3 internal error, 130 Ctrl-C, 143 SIGTERM.")
    add_algorithm_options(p)
    p.add_argument("--claim-epsilon", type=number("--claim-epsilon", lo=0), metavar="E",
                   help="audit against this ε instead of the algorithm's claim "
                        "(default: the algorithm's own claim)")
    p.add_argument("--claim-delta", type=number("--claim-delta", lo=0, hi=1, lo_open=False,
                                                hi_open=True), metavar="D",
                   help="audit against this δ (default: the algorithm's own claim)")
    p.add_argument("--claim-per-round-epsilon", type=number("--claim-per-round-epsilon", lo=0),
                   metavar="E", help="audit against this per-round ε_t (default: the "
                                     "algorithm's own, if it declares one)")
    p.add_argument("--claim-mu", type=number("--claim-mu", lo=0), metavar="MU",
                   help="audit against μ-GDP (its whole δ(ε) curve) instead of the "
                        "algorithm's claim (default: the algorithm's own claim)")
    p.add_argument("--claim-rho", type=number("--claim-rho", lo=0), metavar="RHO",
                   help="audit against ρ-zCDP (the δ(ε) curve it implies) instead of the "
                        "algorithm's claim (default: the algorithm's own claim)")
    p.add_argument("--trials", type=positive_int("--trials"), default=None,
                   help="runs per side of every neighbouring pair (default: 200000; for code "
                        "run as written one Python call per run, as many as fit --time)")
    p.add_argument("--time", type=number("--time", lo=0), default=None, metavar="SECONDS",
                   help="the time the audit aims to take: sets the default --trials from the "
                        "code's measured speed (the figure chosen is printed in the command "
                        "that reproduces the audit) (default: 60 for code run as written one "
                        "call per run; none for vectorised code)")
    p.add_argument("--pilot-share", type=number("--pilot-share", lo=0, hi=1), default=None,
                   metavar="F",
                   help="the share of its full size the neighbour search's pilot spends on "
                        "code run as written: --time sets it for slow code, and the command "
                        "that reproduces such an audit gives it (default: from --trials)")
    p.add_argument("--attack", action="append", metavar="NAME",
                   help="an attack to run (repeatable; a repeated name runs once; see "
                        "'audit list --attacks') (default: the algorithm's default attacks)")
    p.add_argument("--pair", action="append", metavar="LABEL",
                   help="only the attacks' pair with this label, as results print it (e.g. "
                        "patterns:one-above; repeatable): rerun alone, it gets the whole "
                        "error budget (default: every pair)")
    p.add_argument("--confidence", type=number("--confidence", lo=0.5, hi=1, lo_open=False,
                                               hi_open=True), default=0.95,
                   help="confidence level C, 0.5 <= C < 1 (default: %(default)s)")
    p.add_argument("--mode", action="append", metavar="MODE",
                   help="black-box, per-round, search, pld, recursion, integral or replay "
                        "(repeatable) (default: all that apply)")
    p.add_argument("--witness", choices=("auto", "on", "off"), default="auto",
                   help="learned witness (a classifier over whole trajectories) on every "
                        "black-box pair (on), on none (off), or on the search's pairs and "
                        "for algorithms that declare no attacks (default: %(default)s)")
    p.add_argument("--runs", choices=("coupled", "independent"),
                   help="how the black-box tests run: coupled (both sides of a pair in blocks "
                        "that share a seed, so the two sides' counts differ only where the "
                        "input moved the output, and each pair's pilot chooses the bet or two "
                        "Clopper-Pearson bounds) or independent (each side from its own "
                        "seeds) (default: coupled wherever that costs no more: code run one "
                        "call per run and learners whose draws run blocked)")
    p.add_argument("--coupled", action="store_true",
                   help="the same as --runs coupled (default: off)")
    p.add_argument("--stop-early", choices=("auto", "on", "off"), default="auto",
                   help="a black-box test on coupled runs stops reading its held-out blocks "
                        "as soon as it certifies a violation (on: a sequential test, valid "
                        "at whichever look it stops; the figure is then the first above the "
                        "claim, not the largest the budget could show), or reads them all "
                        "(off) (default: %(default)s: on for code run as written one call "
                        "per run, off for vectorised code)")
    p.add_argument("--backend", choices=("numpy", "jax"), default="numpy",
                   help="where the black-box tests' learners run: numpy, or JAX on the device "
                        "it finds (a GPU where there is one; pip install "
                        "'bandit-privacy-audit[jax]'), for learners written for both "
                        "('audit list' marks them) (default: %(default)s)")
    p.add_argument("--report", metavar="DIR",
                   help="also write an HTML and Markdown report into DIR (default: none)")
    p.add_argument("--quiet", action="store_true",
                   help="print only the VERDICT line with the command that reproduces it "
                        "(and the report path), errors and warnings; no progress "
                        "(default: off)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print every neighbouring pair and white-box mode with its notes, "
                        "the declaration checks and the learned witnesses (default: one line "
                        "per attack)")
    add_execution_options(p)


def refuse_inapplicable_attacks(alg, names) -> None:
    """Refuse, before any simulation, an ``--attack`` that is unknown or does
    not apply to ``alg`` (its ``scenarios`` raises ValueError): one line
    naming the flag, the attack and what it needs."""
    from algorithms.suggest import did_you_mean
    from attacks import ATTACKS
    for name in names or ():
        attack = ATTACKS.get(name)
        if attack is None:
            raise ValueError(f"--attack {name!r}: unknown attack"
                             + (did_you_mean(name, ATTACKS) or f"; choose from: "
                                f"{', '.join(ATTACKS)}") + " (see 'audit list --attacks')")
        try:
            check_attack_applies(attack, alg)
        except ValueError as exc:
            raise ValueError(f"--attack {name}: {one_line(exc)} (see 'audit list --attacks')"
                             ) from None


def refuse_unknown_modes(modes) -> None:
    """Refuse a ``--mode`` that is not a mode, naming the closest ones."""
    from algorithms.suggest import did_you_mean
    from audit.engine.evidence import MODES
    for m in modes or ():
        if m not in MODES:
            raise ValueError(f"--mode {m!r}: unknown mode{did_you_mean(m, MODES)} (choose "
                             f"from: {', '.join(MODES)})")


def _resume_note(result, store) -> str:
    if store is None or not result.chunks_reused:
        return ""
    total = result.chunks_reused + result.chunks_computed
    return (f"  resumed: {result.chunks_reused} of {total} chunks came from the store "
            f"{store.path}")


def report_regret(alg, seed: int, store=None, fingerprint=None, runs: int = 200):
    """The regret curve a report draws (200 runs on the ``gap`` instance),
    kept in the store beside the audit's chunks so a rerun does not simulate
    it again."""
    from audit.engine.regret import regret_curve
    key = f"regret-curve:{runs}:{seed}"
    if store is not None and fingerprint is not None:
        kept = store.get_derived(fingerprint, key)
        if kept is not None:
            return kept.get("curve")
    curve = regret_curve(alg, runs=runs, seed=seed)
    if store is not None and fingerprint is not None:
        store.put_derived(fingerprint, key, {"curve": curve})
    return curve


def verdict_line(result, name: str) -> str:
    """The one line ``--quiet`` prints: the verdict, the bound and the claim."""
    c = result.claim
    word = "VIOLATION" if result.violation else "consistent"
    figures = (f"{c.words} (at ε = {c.epsilon:g}, δ = {c.delta:g} and along its curve)"
               if c.curve is not None else f"ε = {c.epsilon:g}, δ = {c.delta:g}")
    return (f"VERDICT: {word} — {name}: ε lower bound {result.epsilon_lower_bound:.6g} vs "
            f"claim: {figures} ({result.trials} runs per side, "
            f"{100 * result.confidence:.6g}% confidence)")


def cmd_run(args):
    from audit.engine import audit_algorithm, reproduce_command
    from audit.engine.scenarios import attack_names, search_wanted
    from audit.execution.progress import Reporter, reporting
    from audit.execution.store import keep_from_env

    if args.report:
        check_output_dir(args.report, "--report")
    if args.json:
        check_writable(args.json, "--json")
    if not args.no_store:
        keep_from_env()  # a bad $AUDIT_STORE_KEEP is refused before any work
    args.attack = dedupe(args.attack)
    refuse_unknown_modes(args.mode)
    reporter = Reporter(enabled=not args.quiet)
    alg = build_algorithm(args)
    refuse_inapplicable_attacks(alg, args.attack)
    warning = data_independence_warning(alg)
    if warning:  # before any work, also with --quiet
        import sys
        print(f"audit: warning: {warning}", file=sys.stderr)
    claim = Claim.override(alg.claim, args.claim_epsilon, args.claim_delta,
                           "user-supplied claim (--claim-epsilon/--claim-delta/"
                           "--claim-per-round-epsilon)", args.claim_per_round_epsilon)
    curves = [(flag, kind, v) for flag, kind, v in (("--claim-mu", "gdp", args.claim_mu),
                                                    ("--claim-rho", "zcdp", args.claim_rho))
              if v is not None]
    if curves:
        given = [f for f, v in (("--claim-epsilon", args.claim_epsilon),
                                ("--claim-delta", args.claim_delta),
                                ("--claim-per-round-epsilon", args.claim_per_round_epsilon))
                 if v is not None] + [f for f, _, _ in curves]
        if len(given) > 1:
            raise UsageError(f"{given[0]} and {given[1]}: give one claim (an ε, δ pair, "
                             f"--claim-mu or --claim-rho)")
        flag, kind, value = curves[0]
        if value <= 0:
            raise UsageError(f"{flag} must be a number > 0, got {value:g}")
        claim = Claim.override_curve(alg.claim, kind, value, f"user-supplied claim ({flag})")
    echo = {"--epsilon": args.epsilon, "--delta": args.delta, "--horizon": args.horizon,
            "--arms": args.arms, "--experts": args.experts, "--param": args.param or None,
            "--methods": args.methods, "--feedback": args.feedback,
            "--environment": args.environment,
            "--input-range": ("{:g},{:g}".format(*args.input_range)
                              if args.input_range else None),
            "--relation": args.relation, "--max-change": args.max_change,
            "--claim-epsilon": args.claim_epsilon, "--claim-delta": args.claim_delta,
            "--claim-per-round-epsilon": args.claim_per_round_epsilon,
            "--claim-mu": args.claim_mu, "--claim-rho": args.claim_rho}
    if args.trials is not None and args.time is not None:
        raise UsageError("--time sets the default --trials: give one of --time and --trials")
    if args.pilot_share is not None and args.trials is None:
        raise UsageError("--pilot-share goes with --trials (the command that reproduces an "
                         "audit fitted to --time gives both)")
    if args.pilot_share is not None and isinstance(alg.extra, dict):
        alg.extra["pilot_share"] = args.pilot_share
    refit = None
    if args.trials is None:
        from audit.engine.budget import fitted_trials, over_time, refitted_trials
        with reporter.phase(f"timing {alg.name} to fit the budget", 1, "steps",
                            quiet_below=1.0) as phase:
            args.trials = fitted_trials(alg, args.time)
            phase.update(1)
        slow = over_time(alg, args.time, args.trials)
        if slow:
            import sys
            print(f"audit: warning: {slow}", file=sys.stderr)

        def refit(scenarios):
            trials = refitted_trials(alg, args.time, scenarios, args.trials)
            if trials == args.trials:
                return None
            args.trials = trials
            return trials, command_at(trials)
    # The search pilot's share as this audit spends it: capped by the time
    # it was fitted to, or by --pilot-share.
    from attacks.search import pilot_share
    share = pilot_share(alg, args.trials)
    args.pair = dedupe(args.pair)
    names = attack_names(alg, args.attack,
                         search=search_wanted(not args.mode or "black-box" in args.mode,
                                              args.pair))
    witness = {"auto": None, "on": True, "off": False}[args.witness]
    stop_early = {"auto": None, "on": True, "off": False}[args.stop_early]
    if args.coupled and args.runs == "independent":
        raise UsageError("--coupled is --runs coupled: give one of --coupled and "
                         "--runs independent")
    coupled = {None: True if args.coupled else None, "coupled": True,
               "independent": False}[args.runs]

    def command_at(trials):
        # Where the time capped the search's pilot, or the budget grew once
        # the pairs were known (``refit``), the pilot's share is no longer
        # the one --trials gives: the command says it.
        from attacks.search import uncapped_pilot_share
        if share < uncapped_pilot_share(alg, trials):
            echo["--pilot-share"] = f"{share:g}"
        return reproduce_command(args.algorithm, echo, names, trials, args.confidence,
                                 args.seed, args.mode, witness, args.pair, coupled,
                                 args.backend, stop_early)

    command = command_at(args.trials)
    pruned = None
    with execution(args, args.jobs) as ex, reporting(reporter):
        try:
            result = audit_algorithm(alg, args.attack, trials=args.trials,
                                     confidence=args.confidence, seed=args.seed, jobs=args.jobs,
                                     claim=claim, command=command, modes=args.mode,
                                     executor=ex, progress=reporter, witness=witness,
                                     pairs=args.pair, coupled=coupled,
                                     backend=args.backend, stop_early=stop_early,
                                     refit=refit)
        except KeyboardInterrupt as exc:   # Ctrl-C or SIGTERM: main prints one line
            note_kept_chunks(exc, ex.store)
            raise
        regret = None
        if args.report:
            with reporter.phase("regret curve for the report", 1, "steps") as phase:
                regret = report_regret(alg, args.seed, ex.store, result.fingerprint)
                phase.update(1)
        if ex.store is not None:
            ex.store.record_audit(result, result.fingerprint, source="run",
                                  name=history_name(args))
            pruned = auto_prune(ex.store)
        note = _resume_note(result, ex.store)
        result.regret = regret
    if args.report:
        from audit.report.render import figure_count, write_report
        doc = result.as_dict()
        with reporter.phase(f"report {args.report}", figure_count(doc), "figures") as phase:
            paths = write_report(doc, args.report, progress=lambda: phase.update(1))
    if args.quiet:  # the verdict, and the command that reproduces it (a CI log needs it)
        print(verdict_line(result, args.algorithm))
        print("\n".join(result.reproduce_lines()))
    else:
        print(result.summary(verbose=args.verbose))
    if note:  # reused chunks are worth knowing even with --quiet
        print(note)
    if pruned and not args.quiet:
        print(pruned)
    if args.json:
        write_json_atomic(args.json, result.as_dict())
    if args.report:
        print(f"  report: {paths['html']}")
    return EXIT_VIOLATION if result.violation else EXIT_OK
