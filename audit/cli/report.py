"""``audit report`` (re-render a saved result document) and ``audit
gallery`` (audit every built-in algorithm and write all reports).

May import: ``audit.execution``, ``audit.report``, ``audit.cli.common``, ``audit.jsondoc``.
"""
from __future__ import annotations

from audit.cli.common import (EXIT_INTERNAL, EXIT_OK, add_execution_options, check_output_dir,
                              execution, nonnegative_int, positive_int)


def add_report_parsers(sub):
    p = sub.add_parser("report", help="re-render a report from a saved result document",
                       description="Write the HTML and Markdown report of a result document "
                                   "saved with 'audit run --json'.")
    p.add_argument("result", metavar="RESULT.json",
                   help="an audit-result/1 document (required)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="folder to write the report into (required; no default)")
    g = sub.add_parser("gallery", help="regenerate reports/ for every built-in algorithm and "
                                       "mechanism",
                       description="Audit every registered algorithm and mechanism and write "
                                   "its report, plus an index, into one folder.  Exit 0, or 3 "
                                   "if an audit failed (the others are still written).")
    g.add_argument("--out", default="reports", metavar="DIR",
                   help="folder for the reports (default: %(default)s)")
    g.add_argument("--trials", type=positive_int("--trials"), default=200_000,
                   help="runs per side of every neighbouring pair (default: %(default)s)")
    g.add_argument("--seed", type=nonnegative_int("--seed"), default=0,
                   help="seed of every random stream (default: %(default)s)")
    g.add_argument("--jobs", type=positive_int("--jobs"), default=None, metavar="N",
                   help="worker processes (default: the number of CPUs)")
    g.add_argument("--only", metavar="NAME[,NAME...]",
                   help="regenerate these entries only; the index then lists them alone "
                        "(default: every registered entry)")
    add_execution_options(g)


def load_result(path: str) -> dict:
    import json
    from audit import jsondoc
    try:
        with open(path) as fh:
            doc = jsondoc.load(fh)   # "inf"/"-inf" back to floats (audit.jsondoc)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON result ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != "audit-result/1":
        raise ValueError(f"{path}: not an audit-result/1 document (schema "
                         f"{doc.get('schema') if isinstance(doc, dict) else None!r})")
    return doc


def cmd_report(args):
    from audit.report.render import figure_count, write_report
    from audit.execution.progress import Reporter
    check_output_dir(args.out, "--out")
    try:
        doc = load_result(args.result)
        with Reporter().phase(f"report {args.out}", figure_count(doc), "figures") as phase:
            paths = write_report(doc, args.out, progress=lambda: phase.update(1))
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(args.result) else f"{args.result}: {msg}") from None
    print(f"report written: {paths['html']} and {paths['md']}")
    return EXIT_OK


def cmd_gallery(args):
    import os
    from audit.report.gallery import build_gallery
    from audit.execution.progress import Reporter, reporting
    from algorithms.registry import REGISTRY
    from algorithms.suggest import did_you_mean
    check_output_dir(args.out, "--out")
    names = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    for n in names or ():
        if n not in REGISTRY:
            raise ValueError(f"--only {n!r}: unknown algorithm" + (did_you_mean(n, REGISTRY)
                                                                   or ""))
    jobs = args.jobs or os.cpu_count() or 1
    with execution(args, jobs) as ex, reporting(Reporter()):  # every audit reports its phases
        rows = build_gallery(args.out, trials=args.trials, seed=args.seed, jobs=jobs,
                             names=names, executor=ex)
    return EXIT_INTERNAL if any(r["error"] for r in rows) else EXIT_OK
