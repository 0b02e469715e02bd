"""``audit run``."""
from __future__ import annotations

from algorithms.core import Claim

EXIT_OK, EXIT_VIOLATION = 0, 1


def add_run_parser(sub, add_algorithm_options, number, positive_int):
    p = sub.add_parser("run", help="audit an algorithm against its privacy claim")
    add_algorithm_options(p)
    p.add_argument("--claim-epsilon", type=number("--claim-epsilon", lo=0))
    p.add_argument("--claim-delta", type=number("--claim-delta", lo=0, hi=1, lo_open=False,
                                                hi_open=True))
    p.add_argument("--trials", type=positive_int("--trials"), default=200_000,
                   help="runs per side of every neighbouring pair")
    p.add_argument("--attack", action="append", metavar="NAME")
    p.add_argument("--confidence", type=number("--confidence", lo=0, hi=1, hi_open=True),
                   default=0.95)
    p.add_argument("--mode", action="append", metavar="MODE",
                   help="black-box, per-round, search or pld (repeatable); default: all that apply")
    p.add_argument("--report", metavar="DIR")
    p.add_argument("--quiet", action="store_true")


def cmd_run(args):
    from .cli import _build_algorithm, write_json_atomic
    from .engine import audit_algorithm, reproduce_command

    alg = _build_algorithm(args)
    claim = None
    if args.claim_epsilon is not None or args.claim_delta is not None:
        base = alg.claim
        if args.claim_epsilon is None and base is None:
            raise ValueError("--claim-delta needs --claim-epsilon for an algorithm with no claim")
        claim = Claim(args.claim_epsilon if args.claim_epsilon is not None else base.epsilon,
                      args.claim_delta if args.claim_delta is not None else (base.delta if base else 0.0),
                      base.scope if base else "actions", "user-supplied claim (--claim-epsilon/--claim-delta)")
    echo = {"--epsilon": args.epsilon, "--delta": args.delta, "--horizon": args.horizon,
            "--arms": args.arms, "--experts": args.experts, "--param": args.param or None,
            "--claim-epsilon": args.claim_epsilon, "--claim-delta": args.claim_delta}
    from .engine import scenarios_for
    _, names = scenarios_for(alg, args.attack)  # validate attack names before running
    command = reproduce_command(args.algorithm, echo, names, args.trials, args.confidence,
                                args.seed, args.mode)
    result = audit_algorithm(alg, args.attack, trials=args.trials, confidence=args.confidence,
                             seed=args.seed, jobs=args.jobs, claim=claim,
                             show_progress=not args.quiet, command=command, modes=args.mode)
    print(result.summary())
    if args.json:
        write_json_atomic(args.json, result.as_dict())
    return EXIT_VIOLATION if result.violation else EXIT_OK
