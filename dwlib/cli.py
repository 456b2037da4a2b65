"""The dwlib command line: every subcommand, its options and its output, in one place.

Each subcommand is a parser registered by one ``_add_*`` function below and a ``run`` default
that calls the library and formats what it returns (text, or JSON with ``--json``). The
library below never parses arguments or prints: it returns values and raises
:class:`dwlib.errors.InputError`, which becomes one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from dwlib.errors import InputError

class _Parser(argparse.ArgumentParser):
    """argparse prints usage plus the error; we print one line, exit 2 as argparse does."""

    def error(self, message: str):  # noqa: D102
        self.exit(2, f"{self.prog}: error: {message}\n")  # "dwlib: ..." or "dwlib train: ..."


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dwlib", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (_add_env, _add_bounds, _add_seprank, _add_train, _add_sweep, _add_advise):
        add(sub)
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


def _legacy(module: str, sub) -> None:  # removed once every section below is moved here
    importlib.import_module(module).add_commands(sub)


# --- env (owner: bounds) ------------------------------------------------------------------

def _add_env(sub) -> None:
    _legacy("dwlib.env", sub)


# --- bounds, corollary1 (owner: bounds) -----------------------------------------------------

def _add_bounds(sub) -> None:
    _legacy("dwlib.core.bounds", sub)


# --- seprank (owner: seprank) ---------------------------------------------------------------

def _add_seprank(sub) -> None:
    _legacy("dwlib.core.seprank", sub)


# --- train (owner: training) ----------------------------------------------------------------

def _add_train(sub) -> None:
    _legacy("dwlib.train.loop", sub)


# --- sweep (owner: training) ----------------------------------------------------------------

def _add_sweep(sub) -> None:
    _legacy("dwlib.experiments.sweep", sub)


# --- advise (owner: guidelines) -------------------------------------------------------------

def _add_advise(sub) -> None:
    _legacy("dwlib.core.fit", sub)
