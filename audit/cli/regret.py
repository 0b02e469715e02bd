"""``audit regret``: estimate an algorithm's expected regret on a named
loss instance.

May import: ``algorithms``, ``attacks``, ``audit.engine``, ``audit.cli.common``.
"""
from __future__ import annotations

from audit.cli.common import EXIT_OK, build_algorithm, check_writable, write_json_atomic


def cmd_regret(args) -> int:
    from audit.engine.contract import check_interface
    from attacks.instances import make_instance
    from audit.engine.regret import estimate_regret
    if args.json:
        check_writable(args.json, "--json")
    alg = build_algorithm(args)
    if alg.learner.reads_first:
        raise ValueError(f"audit regret does not apply to {args.algorithm}: a mechanism over a "
                         f"stream of answers incurs no loss")
    if alg.check_losses is None:  # estimate_regret refuses the others with one line
        inst = make_instance(args.instance, alg.horizon, alg.n_arms, alg.n_experts,
                             alg.loss_range)
        check_interface(alg, inst.losses, inst.advice)
    result = estimate_regret(alg, runs=args.runs, instance=args.instance, seed=args.seed,
                             jobs=args.jobs)
    print(result)
    if args.json:
        write_json_atomic(args.json, result.as_dict())
    return EXIT_OK
