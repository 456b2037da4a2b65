"""The base layer and the book's set-up: the environment report (and ``dwlib env``), the
atomic writers of dwlib.store, and the chapters' Colab cells."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jax
import nbformat
import pytest

import numpy as np

from dwlib import env, fmt
from dwlib import store as files
from dwlib.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_env_report_describes_this_machine():
    rep = env.report()
    assert rep["backend"] == jax.default_backend()
    assert rep["device_count"] == len(jax.devices()) >= 1
    assert rep["versions"]["jax"] == jax.__version__
    text = env.format_report(rep)
    assert text.splitlines()[0].startswith("backend")
    assert f"jax {jax.__version__}" in text


def test_cli_env_json(capsys):
    assert main(["env", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"backend", "device_count", "versions"} <= set(out)


@pytest.mark.parametrize("nb", sorted((ROOT / "book").rglob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_run_on_colab_as_they_are(nb):
    """First cell: guarded Colab install, hidden in the book, skipped by nbval; TPU runtime asked."""
    notebook = nbformat.read(nb, as_version=4)
    first = notebook.cells[0]
    assert first.cell_type == "code"
    assert 'if "google.colab" in sys.modules:' in first.source
    assert {"remove-cell", "nbval-skip"} <= set(first.metadata.get("tags", []))
    assert notebook.metadata.get("accelerator") == "TPU"
    # (the cell's code, its repository URL and the TPU type: tests/test_colab.py)
    # committed with outputs: nbval compares them
    assert any(c.get("outputs") for c in notebook.cells if c.cell_type == "code")


def test_files_are_written_whole_and_leave_no_temporary_behind(tmp_path, monkeypatch):
    path = files.write_json(tmp_path / "a.json", {"x": [1, 2]}, indent=None)
    assert path.read_text() == '{"x": [1, 2]}\n'
    files.write_lines(tmp_path / "b.jsonl", ["1", "2"])
    assert (tmp_path / "b.jsonl").read_text() == "1\n2\n"
    files.write_text(tmp_path / "a.json", "old")

    def broken_dumps(*a, **k):
        raise TypeError("not serialisable")

    monkeypatch.setattr(json, "dumps", broken_dumps)
    try:
        files.write_json(tmp_path / "a.json", object())
    except TypeError:
        pass
    assert (tmp_path / "a.json").read_text() == "old"  # the target is untouched
    monkeypatch.undo()

    def failing_replace(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(files.os, "replace", failing_replace)
    try:
        files.write_text(tmp_path / "a.json", "new")
    except OSError:
        pass
    assert (tmp_path / "a.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.jsonl"]  # no temporary left


def test_fmt_value_writes_any_value_for_a_reader():
    # the one formatter behind explorer snapshots and the glued-number tables
    assert fmt.value(1024.0) == "1,024" and fmt.value(175e9) == "175,000,000,000"
    # no exponent for a large real: rounded to its significant digits, written in full
    assert fmt.value(70800.47) == "70,800" and fmt.value(2301.7) == "2,302" and fmt.value(134.78) == "134.8"
    assert fmt.value(99999.9) == "100,000" and fmt.value(-12345.6, 3) == "-12,300"
    assert fmt.value(2.5e15) == "2.5e+15" and fmt.value(1e-7) == "1e-07" and fmt.value(float("nan")) == "nan"
    assert fmt.value(np.int64(12345)) == "12,345" and fmt.value(np.float32(1.5)) == "1.5"
    assert fmt.value(3.14159265, 6) == "3.14159" and fmt.value(True) == "True" and fmt.value("x") == "x"


def test_fmt_stable_keeps_ten_significant_digits_of_reals_only():
    # what a notebook saves: glued numbers and charts' data, the same on every CPU
    assert fmt.stable(0.8538945484064752) == fmt.stable(0.853894548406475) == 0.8538945484
    assert fmt.stable({"a": [1.23456789012345e-20, (np.float32(0.1), 7)]}) == {"a": [1.23456789e-20, (0.1000000015, 7)]}
    assert fmt.stable(2 ** 60) == 2 ** 60 and fmt.stable(np.int64(3)) == 3 and fmt.stable(True) is True
    assert fmt.stable("0.8538945484064752") == "0.8538945484064752"  # text is left alone
    assert math.isnan(fmt.stable(float("nan"))) and fmt.stable(float("inf")) == float("inf")
    assert fmt.stable(fmt.stable(2 / 3)) == fmt.stable(2 / 3) == 0.6666666667  # rounding twice changes nothing


def test_fmt_powers_of_ten_share_one_style():
    # given by log10, so that 10^200 (Figure 1's depth 207) fits
    assert fmt.power_of_ten(200 + math.log10(8.4)) == "8.4 × 10^200"
    assert fmt.power_of_ten(math.log10(2.2e-4)) == "2.2 × 10^-4"  # small ones too, not 2.2e-04
    assert fmt.power_of_ten(math.log10(729)) == "729" and fmt.power_of_ten(math.log10(531441)) == "531,441"
    assert fmt.power_of_ten(math.log10(0.22)) == "0.22"
    assert fmt.sci(math.log10(7.3e15)) == "7.3 × 10^15" and fmt.sci(math.log10(2e5), 1) == "2 × 10^5"
    assert fmt.sci(math.log10(9.96e7)) == "1.0 × 10^8"  # the mantissa's rounding carries
    # for sentences and charts: the exponent in superscripts, as a reader writes it
    assert fmt.sci(math.log10(7.3e15), superscript=True) == "7.3 × 10\u00b9\u2075"
    assert fmt.sci(math.log10(9.96e7), superscript=True) == "1.0 × 10\u2078"
    assert fmt.power_of_ten(math.log10(2.2e-4), superscript=True) == "2.2 × 10\u207b\u2074"
    assert fmt.power_of_ten(math.log10(531441), superscript=True) == "531,441"
