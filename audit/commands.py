"""The ``audit`` subcommands ``run``, ``check``, ``report``, ``gallery`` and
``history``: their parsers and handlers, and the executor (local processes or
a Dask cluster, with or without the store) they run on.  Exit codes as in
``audit.cli``."""
from __future__ import annotations

from algorithms.core import Claim

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def add_run_parser(sub, add_algorithm_options, number, positive_int):
    p = sub.add_parser("run", help="audit an algorithm against its privacy claim")
    add_algorithm_options(p)
    p.add_argument("--claim-epsilon", type=number("--claim-epsilon", lo=0))
    p.add_argument("--claim-delta", type=number("--claim-delta", lo=0, hi=1, lo_open=False,
                                                hi_open=True))
    p.add_argument("--claim-per-round-epsilon", type=number("--claim-per-round-epsilon", lo=0),
                   metavar="E", help="audit against this per-round ε_t (default: the "
                                     "algorithm's own, if it declares one)")
    p.add_argument("--trials", type=positive_int("--trials"), default=200_000,
                   help="runs per side of every neighbouring pair")
    p.add_argument("--attack", action="append", metavar="NAME")
    p.add_argument("--confidence", type=number("--confidence", lo=0.5, hi=1, lo_open=False,
                                               hi_open=True), default=0.95,
                   help="confidence level C, 0.5 <= C < 1 (default 0.95)")
    p.add_argument("--mode", action="append", metavar="MODE",
                   help="black-box, per-round, search or pld (repeatable); default: all that apply")
    p.add_argument("--report", metavar="DIR")
    p.add_argument("--quiet", action="store_true")
    add_execution_options(p)


def add_execution_options(p):
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run the chunks on this Dask scheduler (default: $AUDIT_SCHEDULER, "
                        "else local processes); needs the [dask] extra")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--store", metavar="PATH",
                   help="keep completed chunks and the history here (default: $AUDIT_STORE, "
                        "else $XDG_CACHE_HOME/privacy-audit/store.sqlite)")
    g.add_argument("--no-store", action="store_true",
                   help="keep nothing: no resume, no history")


def open_store(args, readonly: bool = False):
    """The store the arguments ask for, or None for --no-store.  A store named
    by --store or $AUDIT_STORE must work (else exit 2); the default one in the
    cache directory is skipped with a warning when it cannot be used."""
    import os
    import sys
    from .store import STORE_ENV, Store, StoreError, default_path
    if getattr(args, "no_store", False):
        return None
    path = args.store or default_path()
    if args.store or os.environ.get(STORE_ENV):
        return Store(path, readonly=readonly)
    try:
        return Store(path, create_dirs=True, readonly=readonly)
    except (StoreError, OSError) as exc:
        print(f"audit: warning: cannot use the store {path} ({exc}); running without it "
              f"(no resume, no history)", file=sys.stderr)
        return None


class execution:
    """``with execution(args, jobs) as ex:`` — the executor the arguments ask
    for (local processes or a Dask cluster, with or without a store); closes
    the client and the store on the way out."""

    def __init__(self, args, jobs: int):
        import os
        self.args, self.jobs = args, jobs
        self.address = args.scheduler or os.environ.get("AUDIT_SCHEDULER") or None

    def __enter__(self):
        from .simulate import Executor
        self.store = open_store(self.args)
        self.client = None
        try:
            if self.address:
                from .cluster import connect
                self.client = connect(self.address)
        except BaseException:
            if self.store is not None:
                self.store.close()
            raise
        return Executor(jobs=self.jobs, client=self.client, store=self.store)

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
        if self.store is not None:
            self.store.close()


def _resume_note(result, store) -> str:
    if store is None or not result.chunks_reused:
        return ""
    total = result.chunks_reused + result.chunks_computed
    return (f"  resumed: {result.chunks_reused} of {total} chunks came from the store "
            f"{store.path}")


def check_output_dir(path: str, flag: str) -> None:
    """Refuse an output folder that cannot be written before any work is done
    (it may not exist yet; its parent must)."""
    from .cli import check_writable
    check_writable(path, flag, directory=True)


def cmd_run(args):
    from .cli import _build_algorithm, check_writable, write_json_atomic
    from .engine import attack_names, audit_algorithm, reproduce_command

    if args.report:
        check_output_dir(args.report, "--report")
    if args.json:
        check_writable(args.json, "--json")
    alg = _build_algorithm(args)
    claim = Claim.override(alg.claim, args.claim_epsilon, args.claim_delta,
                           "user-supplied claim (--claim-epsilon/--claim-delta/"
                           "--claim-per-round-epsilon)", args.claim_per_round_epsilon)
    echo = {"--epsilon": args.epsilon, "--delta": args.delta, "--horizon": args.horizon,
            "--arms": args.arms, "--experts": args.experts, "--param": args.param or None,
            "--claim-epsilon": args.claim_epsilon, "--claim-delta": args.claim_delta,
            "--claim-per-round-epsilon": args.claim_per_round_epsilon}
    command = reproduce_command(args.algorithm, echo, attack_names(alg, args.attack),
                                args.trials, args.confidence,
                                args.seed, args.mode)
    with execution(args, args.jobs) as ex:
        try:
            result = audit_algorithm(alg, args.attack, trials=args.trials,
                                     confidence=args.confidence, seed=args.seed, jobs=args.jobs,
                                     claim=claim, show_progress=not args.quiet, command=command,
                                     modes=args.mode, executor=ex)
        except KeyboardInterrupt:
            if ex.store is not None:
                import sys
                print(f"audit: interrupted; completed chunks are kept in {ex.store.path}: "
                      f"rerun the same command to resume", file=sys.stderr)
            raise
        if ex.store is not None:
            ex.store.record_audit(result, result.fingerprint, source="run")
        note = _resume_note(result, ex.store)
    if args.report:
        from .regret import regret_curve
        result.regret = regret_curve(alg, runs=200, seed=args.seed)
    print(result.summary())
    if note:
        print(note)
    if args.json:
        write_json_atomic(args.json, result.as_dict())
    if args.report:
        from .report import write_report
        paths = write_report(result.as_dict(), args.report)
        print(f"  report: {paths['html']}")
    return EXIT_VIOLATION if result.violation else EXIT_OK


def add_report_parsers(sub, positive_int, nonnegative_int):
    p = sub.add_parser("report", help="re-render a report from a saved result document")
    p.add_argument("result", metavar="RESULT.json")
    p.add_argument("--out", required=True, metavar="DIR")
    g = sub.add_parser("gallery", help="regenerate reports/ for every built-in algorithm")
    g.add_argument("--out", default="reports", metavar="DIR")
    g.add_argument("--trials", type=positive_int("--trials"), default=200_000)
    g.add_argument("--seed", type=nonnegative_int("--seed"), default=0)
    g.add_argument("--jobs", type=positive_int("--jobs"), default=None)


def add_check_parser(sub, positive_int, number):
    p = sub.add_parser("check", help="run a suite of audits (the CI gate)")
    p.add_argument("--config", metavar="FILE",
                   help="suite file (default: audit.toml, else [tool.audit] in pyproject.toml)")
    p.add_argument("--junit", metavar="PATH")
    p.add_argument("--report", metavar="DIR")
    p.add_argument("--jobs", type=positive_int("--jobs"), default=None)
    p.add_argument("--scale", type=number("--scale", lo=0), default=1.0,
                   help="multiply every budget (e.g. 0.1 for a fast local run); every audit "
                        "must keep at least 2 runs per side")
    add_execution_options(p)


def add_history_parser(sub, positive_int):
    p = sub.add_parser("history", help="past audit results from the store, newest first")
    p.add_argument("algorithm", metavar="ALGO", nargs="?",
                   help="only this algorithm (or suite entry name)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--limit", type=positive_int("--limit"), default=None)
    p.add_argument("--store", metavar="PATH")


def cmd_history(args):
    import json
    import os
    from .store import Store, default_path
    path = args.store or default_path()
    if not os.path.exists(path):
        if args.store:
            raise ValueError(f"--store: {path}: no such file")
        rows = []
    else:
        with Store(path, readonly=True) as store:
            rows = store.history(args.algorithm, args.limit)
    if args.json:
        print(json.dumps({"schema": "audit-history/1", "store": path, "audits": rows}, indent=2))
        return EXIT_OK
    if not rows:
        what = f" of {args.algorithm}" if args.algorithm else ""
        print(f"no audits{what} recorded in {path}")
        return EXIT_OK
    table = [("when", "source", "audit", "version", "commit", "claim", "ε_lb", "verdict",
              "trials")]
    for r in rows:
        commit = (r["git_commit"] or "-")[:10] + ("*" if r["git_dirty"] else "")
        claim = "-" if r["claim_epsilon"] is None else f"ε={r['claim_epsilon']:g}" + (
            f",δ={r['claim_delta']:g}" if r["claim_delta"] else "")
        name = r["name"] if r["name"] == r["algorithm"] else f"{r['name']} ({r['algorithm']})"
        table.append((r["time"].replace("T", " ")[:19], r["source"], name, r["tool_version"],
                      commit, claim, f"{r['epsilon_lower_bound']:.4g}", r["verdict"],
                      str(r["trials"])))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    print("\n".join(lines))
    print(f"({len(rows)} audit(s) in {path}; * = uncommitted changes)")
    return EXIT_OK


def cmd_check(args):
    """Exit 1 if an expectation was not met, else 3 if an audit hit an error of
    the tool, else 2 if one hit bad input or a user's algorithm that raised or
    broke the interface, else 0."""
    import os
    from .check import find_config, parse_suite, run_suite, scaled_trials, table, write_junit
    from .cli import check_writable
    path, doc = find_config(args.config)
    settings, entries = parse_suite(path, doc)
    scaled_trials(settings, entries, args.scale)
    if args.junit:
        check_writable(args.junit, "--junit")
    if args.report:
        check_output_dir(args.report, "--report")
    jobs = args.jobs or settings.get("jobs") or os.cpu_count() or 1
    print(f"audit check: {len(entries)} audit(s) from {path}")
    with execution(args, jobs) as ex:
        outcomes = run_suite(settings, entries, jobs, scale=args.scale, executor=ex)
    print(table(outcomes, settings))
    if args.junit:
        write_junit(outcomes, args.junit)
    if args.report:
        from .report import write_report
        os.makedirs(args.report, exist_ok=True)
        lines = ["# Audit suite", "", "| audit | verdict | expected | outcome | report |",
                 "|---|---|---|---|---|"]
        for o in outcomes:
            if o.result is None:
                lines.append(f"| {o.entry.name} | error | {o.entry.expect} | ERROR: "
                             f"{o.error.replace('|', '/')} | |")
                continue
            write_report(o.result.as_dict(), os.path.join(args.report, o.entry.name))
            lines.append(f"| {o.entry.name} | {o.verdict} | {o.entry.expect} | "
                         f"{'ok' if o.ok else 'FAIL'} | [report]({o.entry.name}/report.html) |")
        with open(os.path.join(args.report, "index.md"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
    if any(o.failed for o in outcomes):
        return EXIT_VIOLATION
    if any(o.error_kind == "internal" for o in outcomes):
        return EXIT_INTERNAL
    if any(o.error is not None for o in outcomes):
        return EXIT_USAGE
    return EXIT_OK


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
