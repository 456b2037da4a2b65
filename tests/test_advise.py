"""Tests of ``dwlib advise`` (dwlib.cli's advise section): its output for a budget, a depth
and a shape, and the budgets it reads. Bad input is tested once for every command in
tests/test_cli.py."""

from __future__ import annotations

import json

import pytest

from dwlib import cli


@pytest.fixture
def advise(capsys):
    """Run ``dwlib advise ARGS``; return (status, stdout, stderr)."""
    def run(*argv):
        status = cli.main(["advise", *argv])
        out, err = capsys.readouterr()
        return status, out, err
    return run


def test_budget(advise):
    status, out, err = advise("175e9")
    assert status == 0 and err == ""
    assert "depth 81, width 13440 (105 heads of 128)" in out
    assert "nearby practical shapes" in out
    status, out, _ = advise("175e9", "--json", "--head-size", "64")
    data = json.loads(out)
    assert status == 0 and data["suggested"]["width"] % 64 == 0
    assert len(data["nearby"]) == 5


def test_depth(advise):
    status, out, _ = advise("--depth", "70")
    assert status == 0 and "optimal width 7510" in out
    status, out, _ = advise("--depth", "70", "--json")
    assert json.loads(out)["optimal_width"] == pytest.approx(7510.07, abs=0.01)


def test_verdict(advise):
    status, out, _ = advise("--depth", "96", "--width", "12288")
    assert status == 0 and "too deep" in out
    # the rule in the guidelines chapter's words and signs, not as a formula typed in ASCII
    (rule,) = [line for line in out.splitlines() if line.startswith("rule: ")]
    assert rule == "rule: near optimal when |L \N{MINUS SIGN} L*| \N{LESS-THAN OR EQUAL TO} max(0.1 L*, 1) = 8.05 layers"
    status, out, _ = advise("--depth", "96", "--width", "12288", "--head-size", "128", "--json")
    data = json.loads(out)
    assert data["verdict"] == "too deep" and data["heads"] == 96
    assert data["rule"].isascii()  # for a program: the rule as the library states it


def test_other_fit(advise):
    _, authors, _ = advise("1e9", "--json")
    _, other, _ = advise("1e9", "--json", "--intercept", "4.0", "--slope", "0.08")
    assert json.loads(other)["fit"] == {"log_width_intercept": 4.0, "depth_slope": 0.08}
    assert json.loads(other)["suggested"] != json.loads(authors)["suggested"]


@pytest.mark.parametrize("text, value", [
    ("175e9", 175e9), ("175B", 175e9), ("1T", 1e12), ("350M", 350e6), ("1.3e9", 1.3e9),
    ("1_000K", 1e6), ("2G", 2e9)])
def test_parse_budget(text, value):
    assert cli.parse_budget(text) == value
