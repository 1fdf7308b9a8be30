"""One module per `perfdsl` subcommand, each with `add_arguments(parser)` and `run(args)`.

Modules here import their stage's heavy dependencies inside `run`, so building
the argument parser costs no more than argparse.
"""


class CommandError(Exception):
    """A reason the command could not run (exit status 2), as one line for the user."""
