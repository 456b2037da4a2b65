"""The ``dwlib`` program (``dwlib ...`` and ``python -m dwlib ...``).

Signals are taken over before anything else is imported (:mod:`dwlib.interrupts`: the command
line's imports take seconds, jax among them), so that Ctrl-C or SIGTERM at any moment ends the
program with one line and exit status 130 or 143.
"""

import os
import re
import sys

from dwlib import interrupts

interrupts.install()  # first: before the command line's imports

try:
    from dwlib.cli import main as run  # noqa: E402
except ValueError as err:  # JAX reads its JAX_* variables as it is imported: a bad value is one line
    if (flag := re.search(r"for (?:JAX flag |environment ')(\w+)", str(err))) is None:
        raise
    name = flag.group(1).upper()
    print(f"dwlib: error: JAX cannot read {name}={os.environ.get(name, '')[:40]!r} (from the environment)",
          file=sys.stderr)
    raise SystemExit(2) from None
# A path or a name the output's encoding cannot show (PYTHONIOENCODING=ascii) is written escaped.
sys.stdout.reconfigure(errors="backslashreplace")


def main() -> None:
    """The console script's entry: run the command line, then end the process with its status."""
    try:
        code = run()
    except SystemExit as stop:  # argparse: --help, or a usage error (its line is written)
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        if not isinstance(stop.code, (int, type(None))):
            print(stop.code, file=sys.stderr)
    interrupts.finish(code)


if __name__ == "__main__":
    main()
