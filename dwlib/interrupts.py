"""Ctrl-C and SIGTERM in the ``dwlib`` program: one line on stderr and exit status 130 or 143
(128 + the signal), whatever the program is doing when the signal comes.

Python's own handling falls short three ways. Its SIGINT handler raises KeyboardInterrupt in
whatever Python code the main thread runs next; when that is a garbage-collection callback (jax
registers one) or a finalizer, the exception is swallowed ("Exception ignored in ...") and the
program goes on. During the imports (seconds: jax) it is a traceback. And after ``main`` returns,
Python's teardown (a second or more with jax loaded) runs with the default actions restored: the
process dies of the signal without a word (exit status -2 or -15 to its parent), as SIGTERM kills
it at any time. The program's entry (:mod:`dwlib.__main__`) calls :func:`install` before it
imports anything else (only Python's own start-up, the interpreter and site's .pth files, 0.05-0.2 s
before any code of the program runs, keeps Python's defaults), and ends with :func:`finish`; in
between:

- outside a subcommand (imports, parsing the arguments, and after the subcommand returns) a
  signal ends the process at once: the line, then ``os._exit(128 + signal)``;
- while a subcommand runs (:func:`armed`), the signal raises :class:`Interrupted` (a
  KeyboardInterrupt) in the main thread, so that ``finally`` blocks clean up (a sweep stops its
  worker processes, a run directory created for nothing is removed); :func:`dwlib.cli.main` prints
  the line and returns the status;
- an Interrupted swallowed by a callback reaches ``sys.unraisablehook``, where the process ends
  with the line instead of going on;
- a thread woken by the signal itself (``signal.set_wakeup_fd``: the C handler writes it even while
  the main thread is inside a long computation) ends the process with the line if it is still
  running :data:`GRACE` seconds after the signal, and at once on a second signal.

Ending the process at any instant is safe for what dwlib writes: a run or a sweep killed at any
moment (SIGKILL) resumes to the result it would have had (``tests/test_run_state.py``,
``tests/test_interrupts.py``). The library below the command line never changes how its process
handles signals: only the program does, here (a sweep's worker processes, which the library
starts, leave Ctrl-C to their parent).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import select
import signal
import sys
import threading
import time

SIGNALS = (signal.SIGINT, signal.SIGTERM)
GRACE = 3.0  # seconds a subcommand has to unwind after the signal before the process is ended as it is
RESUMABLE = {"train": "run the same command again to resume from the last checkpoint",
             "sweep": "run the same command again to resume (finished runs are kept)"}

# The line is written once, by whichever path gets there first; reentrant, since the handler may run
# in the main thread while it holds the lock (a second signal while the line is written).
_lock = threading.RLock()
_state = {"command": None, "signum": None, "said": False, "armed": False, "installed": False,
          "hook": None}


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM, raised in the main thread while a subcommand runs (a KeyboardInterrupt,
    so that code which cleans up after Ctrl-C cleans up after SIGTERM too)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def status(signum: int) -> int:
    """The exit status for a signal: 128 + its number (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + int(signum)


def line(command: str | None, signum: int) -> str:
    """The one line: ``dwlib train: interrupted (SIGINT); run the same command again to ...``."""
    prog = f"dwlib {command}" if command else "dwlib"
    hint = RESUMABLE.get(command)
    return f"{prog}: interrupted ({signal.Signals(signum).name})" + (f"; {hint}" if hint else "")


def say(command: str | None, signum: int, stream=None) -> None:
    """Write the line (to ``stream``, or straight to file descriptor 2), unless it was written
    already or this is a worker process (its parent speaks for it)."""
    with _lock:
        if _state["said"] or _in_child():
            return
        _state["said"] = True
        text = line(command, signum) + "\n"
        try:
            if stream is None:
                os.write(2, text.encode())
            else:
                stream.write(text)
                stream.flush()
        except (OSError, ValueError):  # stderr closed: nothing to say it on
            pass


def _in_child() -> bool:
    """Whether this is a process started by multiprocessing (a sweep's worker)."""
    mp = sys.modules.get("multiprocessing.process")
    return mp is not None and mp.current_process().name != "MainProcess"


def received() -> int | None:
    """The first signal received since :func:`install`, or None."""
    return _state["signum"]


def _command(argv: list[str]) -> str | None:
    """The subcommand named on the command line, for the line said before the arguments are parsed."""
    first = argv[1] if len(argv) > 1 else ""
    return first if re.fullmatch(r"[a-z][a-z0-9-]{0,30}", first) else None


def install(argv: list[str] | None = None) -> None:
    """Take over SIGINT and SIGTERM for the rest of the process (the program's entry calls it
    first, in the main thread; elsewhere it does nothing). Idempotent."""
    if _state["installed"] or threading.current_thread() is not threading.main_thread():
        return
    _state["installed"] = True
    _state["command"] = _command(sys.argv if argv is None else argv)
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    for signum in SIGNALS:
        signal.signal(signum, _handle)
    _state["hook"], sys.unraisablehook = sys.unraisablehook, _unraisable
    threading.Thread(target=_watch, args=(read,), name="dwlib-interrupts", daemon=True).start()


@contextlib.contextmanager
def armed(command: str):
    """While the block runs, a signal raises :class:`Interrupted` in the main thread (once
    :func:`install` has taken the signals over; without it, Python's own handling stands)."""
    _state.update(command=command, armed=True, said=False, signum=None)  # a new command (several in one process)
    try:
        yield
    finally:
        _state["armed"] = False


def _handle(signum: int, frame) -> None:
    """The Python-level handler (main thread, between two bytecodes of whatever runs there)."""
    first = _state["signum"] is None
    if first:
        _state["signum"] = signum
    if first and _state["armed"] and not _in_child():
        raise Interrupted(signum)
    end(_state["signum"])


def _unraisable(unraisable) -> None:
    """An Interrupted raised inside a callback that swallows exceptions (a garbage-collection
    callback, a finalizer): end the process here, with the line, instead of going on."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _state["signum"] is not None:
        end(_state["signum"])
    _state["hook"](unraisable)


def _watch(fd: int) -> None:
    """The wake-up thread: the C handler writes each signal's number to ``fd`` as it comes, even
    while the main thread is in a long computation. Ends the process when the main thread has not
    done so :data:`GRACE` seconds after the first signal, or at once on a second one. (It leaves the
    first signal to the main thread's handler, which decides whether to raise or to end.)"""
    first = None
    while True:
        timeout = None if first is None else max(0.0, first[1] + GRACE - time.monotonic())
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            end(_state["signum"] or first[0])
        got = [s for s in os.read(fd, 64) if s in SIGNALS]
        if got and (first is not None or len(got) > 1):
            end(_state["signum"] or got[0])
        if got:
            first = (got[0], time.monotonic())


def end(signum: int) -> None:
    """End the process now: the line (once), stdout flushed, worker processes stopped, exit
    status 128 + ``signum``. Nothing is unwound: what dwlib writes survives a kill at any moment."""
    say(_state["command"], signum)
    if threading.current_thread() is threading.main_thread():  # (elsewhere its lock may be held for good)
        with contextlib.suppress(Exception):
            sys.stdout.flush()
    mp = sys.modules.get("multiprocessing")
    if mp is not None:
        with contextlib.suppress(Exception):
            for child in mp.active_children():
                child.kill()
    os._exit(status(signum))


def finish(code: int) -> None:
    """End the program with ``code``: after an interrupt at once (Python's teardown, skipped, has
    crashed there with a computation cut short); otherwise after the exit handlers a normal exit
    runs, with the signals still handled, so that one coming during them gets its line and status."""
    if _state["signum"] is not None:
        end(_state["signum"])
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away (``dwlib ... | head``)
            code = code or 1
        except (OSError, ValueError):
            pass
    shutdown = getattr(threading, "_shutdown", None)  # what Python's exit does first: join the threads
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)
