"""The ``audit`` command line: the parser of every command and ``main``,
which dispatches to one module per command and turns every error into one
line and its exit code (see ``audit.cli.common``).

May import: ``algorithms``, ``audit.cli``.
"""
from __future__ import annotations

import argparse
import os
import sys

from audit.cli.common import (EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, add_algorithm_options,
                              internal_error_line, interrupt_exit_code, interrupted_line,
                              is_user_algorithm, one_line, Parser, positive_int,
                              sigterm_interrupts, UsageError, user_function_in_traceback)


def build_parser() -> argparse.ArgumentParser:
    from audit import __version__
    parser = Parser(prog="audit", description="Empirical privacy auditor for online-learning "
                                                "and bandit algorithms.")
    parser.add_argument("--version", action="version", version=f"audit {__version__}",
                        help="print the tool version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    lp = sub.add_parser("list", help="registered algorithms and attacks",
                        description="List the registered algorithms with their claims, default "
                                    "attacks and the white-box modes that apply; with "
                                    "--attacks, what each attack needs and which algorithms "
                                    "it applies to; with ALGO (and the flags that build it, "
                                    "as for 'audit run'), what applies to that algorithm.")
    from audit.cli import listing
    listing.add_list_arguments(lp)

    r = sub.add_parser("regret", help="estimate expected regret on a named instance",
                       description="Estimate the expected regret of an algorithm on a named "
                                   "loss instance, by simulation.")
    add_algorithm_options(r)
    r.add_argument("--runs", type=positive_int("--runs"), default=1000,
                   help="independent runs to average over (default: %(default)s)")
    r.add_argument("--instance", default="gap",
                   help="the loss instance (default: %(default)s)")

    from audit.cli import check, history, report, run, store
    run.add_run_parser(sub)
    report.add_report_parsers(sub)
    check.add_check_parser(sub)
    history.add_history_parser(sub)
    store.add_store_parser(sub)
    return parser


def main(argv=None) -> int:
    """Run one command; its exit code.  Ctrl-C exits 130 and SIGTERM 143,
    both after the same clean-up (``Terminated`` is a KeyboardInterrupt):
    local worker processes stopped, completed chunks kept in the store, one
    line on stderr."""
    with sigterm_interrupts():
        return _main(argv)


def _main(argv) -> int:
    from algorithms.errors import UserCodeError
    parser = build_parser()
    args = None
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else EXIT_OK
        if args.command is None:
            raise UsageError("a command is required: list, run, check, history, regret, report, "
                             "gallery, store")
        from audit.cli import check, history, listing, regret, report, run, store
        handler = {"list": listing.cmd_list, "regret": regret.cmd_regret, "run": run.cmd_run,
                   "report": report.cmd_report, "gallery": report.cmd_gallery,
                   "check": check.cmd_check, "history": history.cmd_history,
                   "store": store.cmd_store}[args.command]
        return handler(args)
    except UserCodeError as exc:
        algo = getattr(args, "algorithm", None) if args is not None else None
        if (args is not None and args.command in ("run", "regret", "list")
                and is_user_algorithm(algo)):
            print(f"audit: error: {algo}: your {one_line(exc)}", file=sys.stderr)
            return EXIT_USAGE
        # A built-in algorithm that raises is a bug of this tool.
        print(f"audit: internal error: "
              f"{internal_error_line(exc, argv, f'{algo} (built in)' if algo else '')}",
              file=sys.stderr)
        return EXIT_INTERNAL
    except (UsageError, ValueError) as exc:
        print(f"audit: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:   # Ctrl-C, or SIGTERM (Terminated)
        print(interrupted_line(exc), file=sys.stderr)
        return interrupt_exit_code(exc)
    except BrokenPipeError:  # e.g. `audit history | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - anything else is a bug of this tool ...
        algo = getattr(args, "algorithm", None) if args is not None else None
        fn = user_function_in_traceback(exc, algo) if args is not None and args.command in (
            "run", "regret", "list") else None
        if fn is not None:  # ... unless it escaped from the user's own code
            print(f"audit: error: {algo}: your {fn}() raised {type(exc).__name__}: "
                  f"{one_line(exc)}", file=sys.stderr)
            return EXIT_USAGE
        print(f"audit: internal error: {internal_error_line(exc, argv)}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
