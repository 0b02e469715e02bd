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


def check_output_dir(path: str, flag: str) -> None:
    """Refuse an unusable output folder before any work is done."""
    import os
    parent = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{flag}: {path} exists and is not a directory")
    if not os.path.isdir(parent):
        raise ValueError(f"{flag}: parent directory {parent} does not exist")


def cmd_run(args):
    from .cli import _build_algorithm, write_json_atomic
    from .engine import attack_names, audit_algorithm, reproduce_command

    if args.report:
        check_output_dir(args.report, "--report")
    alg = _build_algorithm(args)
    claim = Claim.override(alg.claim, args.claim_epsilon, args.claim_delta,
                           "user-supplied claim (--claim-epsilon/--claim-delta)")
    echo = {"--epsilon": args.epsilon, "--delta": args.delta, "--horizon": args.horizon,
            "--arms": args.arms, "--experts": args.experts, "--param": args.param or None,
            "--claim-epsilon": args.claim_epsilon, "--claim-delta": args.claim_delta}
    command = reproduce_command(args.algorithm, echo, attack_names(alg, args.attack),
                                args.trials, args.confidence,
                                args.seed, args.mode)
    result = audit_algorithm(alg, args.attack, trials=args.trials, confidence=args.confidence,
                             seed=args.seed, jobs=args.jobs, claim=claim,
                             show_progress=not args.quiet, command=command, modes=args.mode)
    if args.report:
        from .regret import regret_curve
        result.regret = regret_curve(alg, runs=200, seed=args.seed)
    print(result.summary())
    if args.json:
        write_json_atomic(args.json, result.as_dict())
    if args.report:
        from .report import write_report
        paths = write_report(result.as_dict(), args.report)
        print(f"  report: {paths['html']}")
    return EXIT_VIOLATION if result.violation else EXIT_OK


def add_report_parsers(sub, positive_int):
    p = sub.add_parser("report", help="re-render a report from a saved result document")
    p.add_argument("result", metavar="RESULT.json")
    p.add_argument("--out", required=True, metavar="DIR")
    g = sub.add_parser("gallery", help="regenerate reports/ for every built-in algorithm")
    g.add_argument("--out", default="reports", metavar="DIR")
    g.add_argument("--trials", type=positive_int("--trials"), default=200_000)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--jobs", type=positive_int("--jobs"), default=None)


def add_check_parser(sub, positive_int, number):
    p = sub.add_parser("check", help="run a suite of audits (the CI gate)")
    p.add_argument("--config", metavar="FILE",
                   help="suite file (default: audit.toml, else [tool.audit] in pyproject.toml)")
    p.add_argument("--junit", metavar="PATH")
    p.add_argument("--report", metavar="DIR")
    p.add_argument("--jobs", type=positive_int("--jobs"), default=None)
    p.add_argument("--scale", type=number("--scale", lo=0), default=1.0,
                   help="multiply every budget (e.g. 0.1 for a fast local run)")


def cmd_check(args):
    import os
    from .check import find_config, parse_suite, run_suite, table, write_junit
    path, doc = find_config(args.config)
    settings, entries = parse_suite(path, doc)
    for flag, out in (("--junit", args.junit), ("--report", args.report)):
        if out:
            check_output_dir(out if flag == "--report" else os.path.dirname(os.path.abspath(out)),
                             flag)
    jobs = args.jobs or settings.get("jobs") or os.cpu_count() or 1
    print(f"audit check: {len(entries)} audit(s) from {path}")
    outcomes = run_suite(settings, entries, jobs, scale=args.scale)
    print(table(outcomes, settings))
    if args.junit:
        write_junit(outcomes, args.junit)
    if args.report:
        from .report import write_report
        os.makedirs(args.report, exist_ok=True)
        lines = ["# Audit suite", "", "| audit | verdict | expected | outcome | report |",
                 "|---|---|---|---|---|"]
        for o in outcomes:
            write_report(o.result.as_dict(), os.path.join(args.report, o.entry.name))
            lines.append(f"| {o.entry.name} | {o.verdict} | {o.entry.expect} | "
                         f"{'ok' if o.ok else 'FAIL'} | [report]({o.entry.name}/report.html) |")
        with open(os.path.join(args.report, "index.md"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return EXIT_OK if all(o.ok for o in outcomes) else EXIT_VIOLATION


def load_result(path: str) -> dict:
    import json
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON result ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != "audit-result/1":
        raise ValueError(f"{path}: not an audit-result/1 document (schema "
                         f"{doc.get('schema') if isinstance(doc, dict) else None!r})")
    return doc


def cmd_report(args):
    from .report import write_report
    check_output_dir(args.out, "--out")
    try:
        paths = write_report(load_result(args.result), args.out)
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(args.result) else f"{args.result}: {msg}") from None
    print(f"report written: {paths['html']} and {paths['md']}")
    return EXIT_OK


def cmd_gallery(args):
    import os
    from .gallery import build_gallery
    check_output_dir(args.out, "--out")
    build_gallery(args.out, trials=args.trials, seed=args.seed,
                  jobs=args.jobs or os.cpu_count() or 1)
    return EXIT_OK
