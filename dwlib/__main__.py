"""The ``dwlib`` program (``dwlib ...`` and ``python -m dwlib ...``)."""

import os
import re
import sys

try:
    from dwlib.cli import main
except ValueError as err:  # JAX reads its JAX_* variables as it is imported: a bad value is one line
    if (flag := re.search(r"for (?:JAX flag |environment ')(\w+)", str(err))) is None:
        raise
    name = flag.group(1).upper()
    print(f"dwlib: error: JAX cannot read {name}={os.environ.get(name, '')[:40]!r} (from the environment)",
          file=sys.stderr)
    raise SystemExit(2) from None
# A path or a name the output's encoding cannot show (PYTHONIOENCODING=ascii) is written escaped.
sys.stdout.reconfigure(errors="backslashreplace")

if __name__ == "__main__":  # spawned workers (dwlib sweep --jobs) import this module again
    raise SystemExit(main())
