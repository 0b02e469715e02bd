"""``audit history``: past audit results from the store, newest first.

May import: ``audit.execution``, ``audit.cli.common``, ``audit.jsondoc``.
"""
from __future__ import annotations

from audit.cli.common import EXIT_OK, positive_int


def add_history_parser(sub):
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


def cmd_history(args):
    import os
    from audit import jsondoc
    from audit.execution.store import Store, default_path
    path = args.store or default_path()
    if not os.path.exists(path):
        if args.store:
            raise ValueError(f"--store: {path}: no such file")
        rows = []
    else:
        with Store(path, readonly=True) as store:
            rows = store.history(args.algorithm, args.limit)
    if args.json:
        print(jsondoc.dumps({"schema": "audit-history/1", "store": path, "audits": rows},
                            indent=2))
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
