"""The paper's mathematics: pure functions, no I/O and no UI (see :mod:`dwlib`)."""
