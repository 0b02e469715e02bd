"""``audit store info`` and ``audit store prune``: the store's size and
contents, and dropping the chunks of older fingerprints.

May import: ``audit.execution``, ``audit.cli.common``.
"""
from __future__ import annotations

from audit.cli.common import EXIT_OK, human_size, nonnegative_int


def add_store_parser(sub):
    from audit.execution.store import DEFAULT_KEEP
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
    from audit.execution.store import Store, default_path
    if args.store_command is None:
        raise ValueError("audit store: an action is required: info, prune")
    path = args.store or default_path()
    if not os.path.exists(path):
        raise ValueError(f"--store: {path}: no such file")
    if args.store_command == "info":
        with Store(path, readonly=True) as store:
            info = store.info()
        rows = [("path", info["path"]), ("size on disk", human_size(info["bytes"])),
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
    print(f"  size: {human_size(done['bytes_before'])} before, {human_size(done['bytes_after'])} after")
    return EXIT_OK
