"""The ``audit`` subcommands ``run``, ``check``, ``report``, ``gallery``,
``history`` and ``store``: their parsers and handlers, the executor (local
processes or a Dask cluster, with or without the store) they run on, and the
store's automatic retention after a run.  Exit codes as in ``audit.cli``."""
from __future__ import annotations

from algorithms.core import Claim

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def add_run_parser(sub, add_algorithm_options, number, positive_int):
    p = sub.add_parser("run", help="audit an algorithm against its privacy claim",
                       description="Audit one algorithm against its privacy claim: black-box "
                                   "on every attack's neighbouring pairs, plus the white-box "
                                   "modes that apply.  Exit 0 consistent, 1 violation, 2 bad "
                                   "input, 3 internal error.")
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
    p.add_argument("--trials", type=positive_int("--trials"), default=200_000,
                   help="runs per side of every neighbouring pair (default: %(default)s)")
    p.add_argument("--attack", action="append", metavar="NAME",
                   help="an attack to run (repeatable; a repeated name runs once; see "
                        "'audit list --attacks') (default: the algorithm's default attacks)")
    p.add_argument("--confidence", type=number("--confidence", lo=0.5, hi=1, lo_open=False,
                                               hi_open=True), default=0.95,
                   help="confidence level C, 0.5 <= C < 1 (default: %(default)s)")
    p.add_argument("--mode", action="append", metavar="MODE",
                   help="black-box, per-round, search or pld (repeatable) "
                        "(default: all that apply)")
    p.add_argument("--report", metavar="DIR",
                   help="also write an HTML and Markdown report into DIR (default: none)")
    p.add_argument("--quiet", action="store_true",
                   help="print only the VERDICT line with the command that reproduces it "
                        "(and the report path), errors and warnings; no progress "
                        "(default: off)")
    add_execution_options(p)


def add_execution_options(p):
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run the chunks on this Dask scheduler; needs the [dask] extra "
                        "(default: $AUDIT_SCHEDULER, else local processes)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--store", metavar="PATH",
                   help="keep completed chunks and the history here; afterwards the store is "
                        "pruned to the newest $AUDIT_STORE_KEEP fingerprints per audit (3 "
                        "unless set; 0 = never) (default: $AUDIT_STORE, else "
                        "$XDG_CACHE_HOME/privacy-audit/store.sqlite)")
    g.add_argument("--no-store", action="store_true",
                   help="keep nothing: no resume, no history (default: off)")


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


def dedupe(names):
    """``names`` without repeats, first occurrence first (None stays None)."""
    return None if names is None else list(dict.fromkeys(names))


def refuse_inapplicable_attacks(alg, names) -> None:
    """Refuse, before any simulation, an ``--attack`` that is unknown or does
    not apply to ``alg`` (its ``scenarios`` raises ValueError): one line
    naming the flag, the attack and what it needs."""
    from attacks import ATTACKS
    from .cli import one_line
    for name in names or ():
        attack = ATTACKS.get(name)
        if attack is None:
            raise ValueError(f"--attack {name!r}: unknown attack; choose from: "
                             f"{', '.join(ATTACKS)}")
        try:
            attack.scenarios(alg)
        except ValueError as exc:
            raise ValueError(f"--attack {name}: {one_line(exc)} (see 'audit list --attacks')"
                             ) from None


def history_name(args) -> "str | None":
    """The name an ``audit run`` is recorded under: the import path for a
    user's ``package.module:attribute`` (so ``audit history PATH`` finds
    it), else the registered name (None: the algorithm's own)."""
    from .cli import is_user_algorithm
    return args.algorithm if is_user_algorithm(args.algorithm) else None


def auto_prune(store) -> "str | None":
    """Prune ``store`` to the newest ``$AUDIT_STORE_KEEP`` fingerprints per
    audit name (default 3; 0 = never); a line saying what was removed, or
    None when nothing was."""
    from .store import keep_from_env
    keep = keep_from_env()
    if store is None or keep == 0:
        return None
    done = store.prune(keep)
    if not done["chunks_removed"]:
        return None
    return (f"  store: removed {done['chunks_removed']} chunk(s) of "
            f"{done['fingerprints_removed'] + done['unfinished_removed']} older fingerprint(s), "
            f"keeping the newest {keep} per audit ({_size(done['bytes_before'])} → "
            f"{_size(done['bytes_after'])}; AUDIT_STORE_KEEP sets how many, 0 = never)")


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def verdict_line(result, name: str) -> str:
    """The one line ``--quiet`` prints: the verdict, the bound and the claim."""
    c = result.claim
    word = "VIOLATION" if result.violation else "consistent"
    return (f"VERDICT: {word} — {name}: ε lower bound {result.epsilon_lower_bound:.6g} vs "
            f"claim: ε = {c.epsilon:g}, δ = {c.delta:g} ({result.trials} runs per side, "
            f"{result.confidence:.0%} confidence)")


def cmd_run(args):
    from .cli import _build_algorithm, check_writable, write_json_atomic
    from .engine import attack_names, audit_algorithm, reproduce_command
    from .progress import Reporter, reporting
    from .store import keep_from_env

    if args.report:
        check_output_dir(args.report, "--report")
    if args.json:
        check_writable(args.json, "--json")
    if not args.no_store:
        keep_from_env()  # a bad $AUDIT_STORE_KEEP is refused before any work
    args.attack = dedupe(args.attack)
    reporter = Reporter(enabled=not args.quiet)
    alg = _build_algorithm(args)
    refuse_inapplicable_attacks(alg, args.attack)
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
    pruned = None
    with execution(args, args.jobs) as ex, reporting(reporter):
        try:
            result = audit_algorithm(alg, args.attack, trials=args.trials,
                                     confidence=args.confidence, seed=args.seed, jobs=args.jobs,
                                     claim=claim, command=command, modes=args.mode,
                                     executor=ex, progress=reporter)
        except KeyboardInterrupt:
            if ex.store is not None:
                import sys
                print(f"audit: interrupted; completed chunks are kept in {ex.store.path}: "
                      f"rerun the same command to resume", file=sys.stderr)
            raise
        if ex.store is not None:
            ex.store.record_audit(result, result.fingerprint, source="run",
                                  name=history_name(args))
            pruned = auto_prune(ex.store)
        note = _resume_note(result, ex.store)
    if args.report:
        from .regret import regret_curve
        with reporter.phase(f"report {args.report}", 2, "steps") as phase:
            result.regret = regret_curve(alg, runs=200, seed=args.seed)
            phase.update(1)
            from .report import write_report
            paths = write_report(result.as_dict(), args.report)
            phase.update(1)
    if args.quiet:  # the verdict, and the command that reproduces it (a CI log needs it)
        print(verdict_line(result, args.algorithm))
        print(f"  reproduce: {result.command}")
    else:
        print(result.summary())
    if note:  # reused chunks are worth knowing even with --quiet
        print(note)
    if pruned and not args.quiet:
        print(pruned)
    if args.json:
        write_json_atomic(args.json, result.as_dict())
    if args.report:
        print(f"  report: {paths['html']}")
    return EXIT_VIOLATION if result.violation else EXIT_OK


def add_report_parsers(sub, positive_int, nonnegative_int):
    p = sub.add_parser("report", help="re-render a report from a saved result document",
                       description="Write the HTML and Markdown report of a result document "
                                   "saved with 'audit run --json'.")
    p.add_argument("result", metavar="RESULT.json",
                   help="an audit-result/1 document (required)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="folder to write the report into (required; no default)")
    g = sub.add_parser("gallery", help="regenerate reports/ for every built-in algorithm",
                       description="Audit every built-in algorithm and write its report, "
                                   "plus an index, into one folder.")
    g.add_argument("--out", default="reports", metavar="DIR",
                   help="folder for the reports (default: %(default)s)")
    g.add_argument("--trials", type=positive_int("--trials"), default=200_000,
                   help="runs per side of every neighbouring pair (default: %(default)s)")
    g.add_argument("--seed", type=nonnegative_int("--seed"), default=0,
                   help="seed of every random stream (default: %(default)s)")
    g.add_argument("--jobs", type=positive_int("--jobs"), default=None, metavar="N",
                   help="worker processes (default: the number of CPUs)")


def add_check_parser(sub, positive_int, number):
    p = sub.add_parser("check", help="run a suite of audits (the CI gate)",
                       description="Run every audit of a suite file and compare each verdict "
                                   "with its expectation.  Exit 0 all as expected, 1 an "
                                   "expectation not met, 2 bad input, 3 internal error.")
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


def add_history_parser(sub, positive_int):
    p = sub.add_parser("history", help="past audit results from the store, newest first",
                       description="Past audits recorded in the store, newest first.")
    p.add_argument("algorithm", metavar="ALGO", nargs="?",
                   help="only this algorithm, suite entry name or package.module:attribute "
                        "(default: all)")
    p.add_argument("--json", action="store_true",
                   help="print the rows as JSON (default: off)")
    p.add_argument("--limit", type=positive_int("--limit"), default=None, metavar="N",
                   help="at most N rows (default: all)")
    p.add_argument("--store", metavar="PATH",
                   help="the store to read (default: $AUDIT_STORE, else "
                        "$XDG_CACHE_HOME/privacy-audit/store.sqlite)")


def add_store_parser(sub, nonnegative_int):
    from .store import DEFAULT_KEEP
    p = sub.add_parser("store", help="inspect or prune the store",
                       description="Housekeeping of the store that keeps completed chunks "
                                   "and the audit history.  After every 'audit run' or "
                                   "'audit check' that writes to it, the store is pruned to "
                                   f"the newest $AUDIT_STORE_KEEP (default {DEFAULT_KEEP}; "
                                   "0 = never) fingerprints per audit name.")
    ssub = p.add_subparsers(dest="store_command", metavar="ACTION", parser_class=type(p))
    store_help = ("the store (default: $AUDIT_STORE, else "
                  "$XDG_CACHE_HOME/privacy-audit/store.sqlite)")
    i = ssub.add_parser("info", help="path, size, audits, fingerprints and chunks",
                        description="Show the store's path, size on disk, number of audits in "
                                    "the history, fingerprints and chunks.")
    i.add_argument("--store", metavar="PATH", help=store_help)
    q = ssub.add_parser("prune", help="drop the chunks of older fingerprints",
                        description="Keep the chunks of the newest N fingerprints per audit "
                                    "name (and of unfinished audits less than a week old), "
                                    "keep every history row, then VACUUM.")
    q.add_argument("--keep", type=nonnegative_int("--keep"), default=DEFAULT_KEEP, metavar="N",
                   help="fingerprints whose chunks are kept per audit name; 0 drops the chunks "
                        "of every finished audit (default: %(default)s)")
    q.add_argument("--store", metavar="PATH", help=store_help)


def cmd_store(args):
    import os
    from .store import Store, default_path
    if args.store_command is None:
        raise ValueError("audit store: an action is required: info, prune")
    path = args.store or default_path()
    if not os.path.exists(path):
        raise ValueError(f"--store: {path}: no such file")
    if args.store_command == "info":
        with Store(path, readonly=True) as store:
            info = store.info()
        rows = [("path", info["path"]), ("size on disk", _size(info["bytes"])),
                ("audits in history", str(info["audits"])),
                ("audit names", str(info["audit_names"])),
                ("fingerprints", f"{info['fingerprints']} ({info['unfinished_fingerprints']} "
                                 f"without a finished audit)"),
                ("chunks", str(info["chunks"]))]
        width = max(len(k) for k, _ in rows)
        for k, v in rows:
            print(f"{k + ':':{width + 1}s} {v}")
        return EXIT_OK
    with Store(path) as store:
        done = store.prune(args.keep)
    print(f"pruned {path} (keeping the newest {args.keep} fingerprint(s) per audit name)")
    print(f"  removed: {done['chunks_removed']} chunk(s) of {done['fingerprints_removed']} "
          f"older fingerprint(s) and {done['unfinished_removed']} stale unfinished one(s); "
          f"{done['fingerprints_kept']} fingerprint(s) kept, every history row kept")
    print(f"  size: {_size(done['bytes_before'])} before, {_size(done['bytes_after'])} after")
    return EXIT_OK


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
    from .progress import Reporter, reporting
    from .store import keep_from_env
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
        outcomes = run_suite(settings, entries, jobs, scale=args.scale, executor=ex)
        pruned = auto_prune(ex.store)
    print(table(outcomes, settings))
    if pruned:
        print(pruned)
    if args.junit:
        write_junit(outcomes, args.junit)
    if args.report:
        from .report import write_report
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
    from .progress import Reporter
    check_output_dir(args.out, "--out")
    try:
        with Reporter().phase(f"report {args.out}", 1, "reports") as phase:
            paths = write_report(load_result(args.result), args.out)
            phase.update(1)
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(args.result) else f"{args.result}: {msg}") from None
    print(f"report written: {paths['html']} and {paths['md']}")
    return EXIT_OK


def cmd_gallery(args):
    import os
    from .gallery import build_gallery
    from .progress import Reporter, reporting
    check_output_dir(args.out, "--out")
    with reporting(Reporter()):  # every audit of the gallery reports its phases
        build_gallery(args.out, trials=args.trials, seed=args.seed,
                      jobs=args.jobs or os.cpu_count() or 1)
    return EXIT_OK
