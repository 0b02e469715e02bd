"""``audit run`` (filled in by the black-box engine)."""


def add_run_parser(sub, add_algorithm_options, number, positive_int):
    p = sub.add_parser("run", help="audit an algorithm against its privacy claim")
    add_algorithm_options(p)


def cmd_run(args):
    raise ValueError("audit run is not implemented yet")
