"""``audit check``: run a suite of audits (the CI gate), print the table,
optionally write JUnit XML and every report.  The suite file itself is
read and run by ``audit.cli.suite``.

May import: ``audit.execution``, ``audit.report``, ``audit.cli``.
"""
from __future__ import annotations

from audit.cli.common import (EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION,
                              add_execution_options, auto_prune, check_output_dir, check_writable,
                              dedupe, execution, note_kept_chunks, number,
                              positive_int)


def add_check_parser(sub):
    p = sub.add_parser("check", help="run a suite of audits (the CI gate)",
                       description="Run every audit of a suite file and compare each verdict "
                                   "with its expectation.  Exit 0 all as expected, 1 an "
                                   "expectation not met, 2 bad input, 3 internal error, "
                                   "130 Ctrl-C, 143 SIGTERM.")
    p.add_argument("--config", metavar="FILE",
                   help="suite file (default: audit.toml, else [tool.audit] in pyproject.toml)")
    p.add_argument("--junit", metavar="PATH",
                   help="also write a JUnit XML file, one test case per audit (default: none)")
    p.add_argument("--report", metavar="DIR",
                   help="also write every audit's report and an index into DIR (default: none)")
    p.add_argument("--jobs", type=positive_int("--jobs"), default=None, metavar="N",
                   help="worker processes (default: the suite's jobs, else the number of CPUs)")
    p.add_argument("--scale", type=number("--scale", lo=0), default=1.0,
                   help="multiply every budget (e.g. 0.1 for a fast local run); every audit "
                        "must keep at least 2 runs per side (default: %(default)s)")
    add_execution_options(p)


def cmd_check(args):
    """Exit 1 if an expectation was not met, else 3 if an audit hit an error of
    the tool, else 2 if one hit bad input or a user's algorithm that raised or
    broke the interface, else 0."""
    import os
    from audit.cli.suite import (find_config, parse_suite, run_suite, scaled_trials, store_line,
                                 table, write_junit)
    from audit.execution.progress import Reporter, reporting
    from audit.execution.store import keep_from_env
    path, doc = find_config(args.config)
    settings, entries = parse_suite(path, doc)
    scaled_trials(settings, entries, args.scale)
    if args.junit:
        check_writable(args.junit, "--junit")
    if args.report:
        check_output_dir(args.report, "--report")
    if not args.no_store:
        keep_from_env()  # a bad $AUDIT_STORE_KEEP is refused before any work
    for e in entries:  # a repeated attack runs once
        if e.spec.get("attacks"):
            e.spec["attacks"] = dedupe(e.spec["attacks"])
    jobs = args.jobs or settings.get("jobs") or os.cpu_count() or 1
    print(f"audit check: {len(entries)} audit(s) from {path}")
    reporter = Reporter()
    pruned = None
    with execution(args, jobs) as ex, reporting(reporter):
        try:
            outcomes = run_suite(settings, entries, jobs, scale=args.scale, executor=ex)
        except KeyboardInterrupt as exc:   # Ctrl-C or SIGTERM: main prints one line
            note_kept_chunks(exc, ex.store)
            raise
        pruned = auto_prune(ex.store)
    print(table(outcomes, settings))
    kept = store_line(outcomes, ex.store)
    if kept:
        print(kept)
    if pruned:
        print(pruned)
    if args.junit:
        write_junit(outcomes, args.junit)
    if args.report:
        from audit.report.render import write_report
        os.makedirs(args.report, exist_ok=True)
        lines = ["# Audit suite", "", "| audit | verdict | expected | outcome | report |",
                 "|---|---|---|---|---|"]
        with reporter.phase(f"reports {args.report}", len(outcomes), "audits") as phase:
            for o in outcomes:
                if o.result is None:
                    lines.append(f"| {o.entry.name} | error | {o.entry.expect} | ERROR: "
                                 f"{o.error.replace('|', '/')} | |")
                else:
                    write_report(o.result.as_dict(), os.path.join(args.report, o.entry.name))
                    lines.append(f"| {o.entry.name} | {o.verdict} | {o.entry.expect} | "
                                 f"{'ok' if o.ok else 'FAIL'} | "
                                 f"[report]({o.entry.name}/report.html) |")
                phase.update(1)
        with open(os.path.join(args.report, "index.md"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
    if any(o.failed for o in outcomes):
        return EXIT_VIOLATION
    if any(o.error_kind == "internal" for o in outcomes):
        return EXIT_INTERNAL
    if any(o.error is not None for o in outcomes):
        return EXIT_USAGE
    return EXIT_OK
