"""Fixtures shared by the test modules."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# One persistent XLA compilation cache for the whole test session, shared by the pytest-xdist
# workers and every subprocess they start (they inherit the environment): the suite trains the
# same tiny shapes in many processes, and each would otherwise compile them again. Created by the
# first process that loads this file (the xdist controller), removed by it at exit. An explicit
# JAX_COMPILATION_CACHE_DIR is left alone; the tests that need a cache of their own set one.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _XLA_CACHE = tempfile.mkdtemp(prefix="dwlib-test-xla-")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    atexit.register(shutil.rmtree, _XLA_CACHE, ignore_errors=True)

# Debian's Chromium, driven by Playwright's Python package (never a downloaded browser), with
# the flags that keep it off the network on its own (tests/browser, tests/live).
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic", "--no-sandbox", "--disable-gpu"]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def _check_refusal(status, err: str, message: str, out: str) -> None:
    """The project's rule for bad input, in one place: exit status 2, one line on stderr that
    names the problem (``message``), nothing on stdout (``out``)."""
    assert status == 2, (status, err)
    assert out == "", out
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    assert message in err, (message, err)


@pytest.fixture
def refused():
    """``refused(status, err, message, out)``: assert the bad-input rule (see _check_refusal)."""
    return _check_refusal


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for one test module."""
    from playwright.sync_api import sync_playwright  # lazy: only the browser suites need it

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium, or set CHROMIUM")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()

TEXT = ("Mr. Speaker, the state of the union is strong; we have paid our debts, kept our word, "
        "and built roads, schools and ports from sea to shining sea. ")


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """A small text corpus file (40 documents) with its tokenizer cache in tmp_path."""
    monkeypatch.setenv("DWLIB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "corpus.txt"
    path.write_text("\n\n".join(TEXT * 4 for _ in range(40)))
    return str(path)
