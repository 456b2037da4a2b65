"""The ``dwlib`` command line.

Each subcommand lives in the module of the concept it serves; a module joins the command
line by defining ``add_commands(subparsers)``, which registers its subparsers and sets a
``run`` default taking the parsed arguments and returning an exit status.
Bad input (:class:`dwlib.errors.InputError`) becomes one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from dwlib.errors import InputError

# Modules that contribute subcommands, in the order they are listed by --help.
COMMAND_MODULES = (
    "dwlib.env",
    "dwlib.core.bounds",
    "dwlib.core.seprank",
    "dwlib.train.loop",
    "dwlib.experiments.sweep",
    "dwlib.core.fit",
)


class _Parser(argparse.ArgumentParser):
    """argparse prints usage plus the error; we print one line, exit 2 as argparse does."""

    def error(self, message: str):  # noqa: D102
        self.exit(2, f"{self.prog}: error: {message}\n")  # "dwlib: ..." or "dwlib train: ..."


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dwlib", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name == name:  # that module is not written yet; its commands are absent
                continue
            raise
        module.add_commands(sub)
    return parser


def print_json(obj) -> None:
    """Print ``obj`` as indented JSON (the ``--json`` output of every subcommand)."""
    json.dump(obj, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except InputError as err:
        print(f"dwlib {args.command}: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (``dwlib ... | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
