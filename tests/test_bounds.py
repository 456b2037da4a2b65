"""dwlib.core.bounds: eqs. (7) and (8) at hand-derived points, shape of the bounds, extremes,
Corollaries 1 and 2 against the paper's numbers, and the ``bounds``/``corollary1`` commands'
output. (Charts, Vega ports and explorers: test_viz_bounds.py; bad command lines: test_cli.py.)"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from dwlib import cli, cli_format
from dwlib.core import bounds
from dwlib.errors import InputError

LOG3_2 = math.log(2) / math.log(3)


def log3(x):
    return math.log(x) / math.log(3)


# ---------------------------------------------------------------------------------------------
# Eq. (7), Theorem 1, by hand

def test_theorem1_at_a_point_with_exact_logs():
    # d_x = 162, H = 81: d_x - H = 81 = 3^4, d_x + H = 243 = 3^5; L = 2 < log3 162 = 4.63.
    # a = -L + 2 - log3 2 = -log3 2; lower = 3^(2-2) (4 - log3 2); upper = (3^2 - 1)/2 * 5 = 20.
    lo, up = bounds.theorem1_bounds(2, 162, 81)
    assert lo == pytest.approx(4 - 0.6309297535714574, rel=1e-12)
    assert up == pytest.approx(20.0, rel=1e-12)


def test_theorem1_at_the_papers_example():
    # d_x = 1000, H = 16, L = 6: a = -6 + 2 - log3 2 = -4.6309...; lower = 81 (log3 984 + a)
    lower = 81 * (log3(984) - 4 - LOG3_2)
    assert lower == pytest.approx(133.00997, abs=1e-4)  # 81 * 1.64210 (checked by hand)
    upper = 364 * log3(1016)  # (3^6 - 1)/2 = 364
    assert bounds.theorem1_lower(6, 1000, 16) == pytest.approx(lower, rel=1e-12)
    assert bounds.theorem1_upper(6, 1000, 16) == pytest.approx(upper, rel=1e-12)


def test_theorem1_at_depth_three():
    # L = 3, d_x = 756, H = 27: d_x - H = 729 = 3^6; lower = 3 (6 - 3 + 2 - log3 2) = 15 - 3 log3 2
    assert bounds.theorem1_lower(3, 756, 27) == pytest.approx(15 - 3 * LOG3_2, rel=1e-12)
    assert bounds.theorem1_upper(3, 756, 27) == pytest.approx(13 * log3(783), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Eq. (8), Theorem 2, by hand

def test_theorem2_at_a_point_with_exact_logs():
    # d_x = 164, H = 2, L = 10 > log3 164 = 4.64. (d_x - H)/2 = 81: log3 = 4.
    # b1 = -10 (2/2 + 1) = -20; b2 = -164 (1 + 4/2) = -492; lower = 820 - 20 - 492 = 308.
    assert bounds.theorem2_lower(10, 164, 2) == pytest.approx(308.0, rel=1e-12)
    # c1 = 10; c2 = -2*164 log3(82 sqrt(2 sqrt(2e))) + log3 164; upper = 3280 + c1 + c2
    k = math.sqrt(2 * math.sqrt(2 * math.e))
    assert k == pytest.approx(2.15946, abs=1e-5)
    upper = 3280 + 10 - 328 * log3(82 * k) + log3(164)
    assert bounds.theorem2_upper(10, 164, 2) == pytest.approx(upper, rel=1e-12)
    assert upper == pytest.approx(3290 - 328 * 4.7119 + 4.6422, abs=0.1)  # log3 177.08, log3 164


def test_log10_conversion():
    assert bounds.log3_to_log10(2.0) == pytest.approx(2 * math.log10(3))


# ---------------------------------------------------------------------------------------------
# Shape of the bounds

def test_monotone_in_depth_within_each_regime():
    # eq. (7) upper grows with L; the lower bound grows while its bracket exceeds 3/2
    # (f(L+1)/f(L) = 3 (B - 1)/B), i.e. at every integer depth but possibly the last.
    for w in (100, 1000, 10**4, 10**6):
        th = math.log(w, 3)
        Ls = np.arange(1, math.ceil(th))
        Ls = Ls[Ls < th]
        lo, up = bounds.theorem1_bounds(Ls, w, 4)
        assert np.all(np.diff(up) > 0)
        assert np.all(np.diff(lo[:-1]) > 0)
        L2 = np.arange(math.floor(th) + 1, 200)
        lo2, up2 = bounds.theorem2_bounds(L2, w, 4)
        assert np.all(np.diff(lo2) > 0) and np.all(np.diff(up2) > 0)


def test_monotone_in_width():
    widths = np.array([800, 1000, 4000, 10**5, 10**6], dtype=float)
    lo, up = bounds.theorem1_bounds(6, widths, 16)
    assert np.all(np.diff(lo) > 0) and np.all(np.diff(up) > 0)
    lo2, up2 = bounds.theorem2_bounds(100, widths[:3], 16)  # far above the threshold
    assert np.all(np.diff(lo2) > 0) and np.all(np.diff(up2) > 0)


def test_upper_exceeds_lower_across_a_grid():
    L, w = np.meshgrid(np.arange(1, 60, 0.25), np.geomspace(20, 1e6, 40))
    b = bounds.separation_rank_bounds(L, w, 8)
    ok = b["theorem"] > 0
    assert np.all(b["upper"][ok] > b["lower"][ok])


def test_regime_edges():
    # 81 = 3^4: depth 4 lies exactly on the threshold; neither theorem applies there.
    assert bounds.depth_threshold(81) == pytest.approx(4.0)
    assert bounds.regime(4, 81) == "threshold"
    assert bounds.regime(3, 81) == "depth-efficient" and bounds.regime(5, 81) == "depth-inefficient"
    b = bounds.separation_rank_bounds(4, 81, 3)
    assert b["theorem"] == 0 and math.isnan(b["lower"]) and math.isnan(b["upper"])
    with pytest.raises(InputError, match="Theorem 1 needs depth < log3"):
        bounds.theorem1_lower(4, 81, 3)
    with pytest.raises(InputError, match="Theorem 2 needs depth > log3"):
        bounds.theorem2_upper(4, 81, 3)
    # Approaching the edge from either side the bounds stay finite and change continuously.
    eps = np.array([1e-3, 1e-6, 1e-9])
    below = bounds.theorem1_lower(4 - eps, 81, 3)
    above = bounds.theorem2_lower(4 + eps, 81, 3)
    assert np.all(np.isfinite(below)) and np.all(np.isfinite(above))
    assert np.ptp(below[1:]) < 1e-4 and np.ptp(above[1:]) < 1e-4
    # The paper's remark "log3(d_x - H) + a > 0 in this regime": at the edge the bracket is
    # 2 - log3 2 + log3(1 - H/d_x), positive exactly when H < 7 d_x / 9.
    assert bounds.theorem1_lower(4 - 1e-9, 81, 40) > 0      # 40 < 63
    assert bounds.theorem1_lower(4 - 1e-9, 81, 70) < 0      # 70 > 63: the remark needs H < 7 d_x/9


def test_no_overflow_at_extremes():
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        L = np.arange(1, 801)
        for w in (10.0, 1e3, 1e6):
            b = bounds.separation_rank_bounds(L, w, 4)
            ok = b["theorem"] > 0
            assert np.all(np.isfinite(b["lower"][ok])) and np.all(np.isfinite(b["upper"][ok]))
        # Theorem 1 with depth in the hundreds: only for astronomically wide (float64) widths
        lo, up = bounds.theorem1_bounds(600, 1e300, 16)
        assert math.isfinite(lo) and math.isfinite(up) and up > lo > 0
        assert bounds.theorem2_upper(500, 1e6, 16) == pytest.approx(2e6 * 500, rel=0.05)


def test_input_validation():
    with pytest.raises(InputError, match="depth must be >= 1"):
        bounds.theorem1_lower(0, 1000, 16)
    with pytest.raises(InputError, match="heads must be >= 1"):
        bounds.separation_rank_bounds(2, 1000, 0)
    with pytest.raises(InputError, match="width must exceed heads"):
        bounds.separation_rank_bounds(2, 16, 16)
    with pytest.raises(InputError, match="finite"):
        bounds.separation_rank_bounds(np.nan, 100, 2)
    with pytest.raises(InputError, match="integer"):
        bounds.corollary1_width(1000, 16, 6.5, 2)
    with pytest.raises(InputError, match="shallow depth must be < depth"):
        bounds.corollary1_width(1000, 16, 6, 6)
    with pytest.raises(InputError, match="Theorem 2 needs"):
        bounds.corollary2(1000, 16, 6)


# ---------------------------------------------------------------------------------------------
# Corollary 1

@pytest.mark.parametrize("w,H,L,Ls", [(1000, 16, 6, 2), (1000, 16, 6, 3), (1024, 16, 5, 1), (10**6, 32, 12, 8)])
def test_corollary1_round_trip(w, H, L, Ls):
    r = bounds.corollary1_width(w, H, L, Ls)
    deep_lower = bounds.theorem1_lower(L, w, H)
    assert r["log3_sep_target"] == pytest.approx(deep_lower)
    # the shallow upper bound at the returned width meets the deep lower bound
    C = (3**Ls - 1) / 2
    log3_ds = r["log10_width"] / math.log10(3)
    shallow_upper = C * (log3_ds + math.log1p(H * 3.0 ** -log3_ds) / math.log(3))
    assert shallow_upper == pytest.approx(deep_lower, rel=1e-9)
    if math.isfinite(r["width"]) and r["shallow_in_theorem1"]:
        assert bounds.theorem1_upper(Ls, r["width"], H) == pytest.approx(deep_lower, rel=1e-9)
        assert bounds.theorem1_upper(Ls, r["width"] * 0.99, H) < deep_lower


def test_corollary1_when_every_width_suffices_returns_width_one():
    # Deep target 133.01; at L_s = 5 the shallow upper bound at width 1 is 121 log3(17) = 311.9 >= 133.01.
    r = bounds.corollary1_width(1000, 16, 6, 5)
    assert r["any_width"] and r["width"] == 1.0 and r["log10_width"] == 0.0
    assert not bounds.corollary1_width(1000, 16, 6, 4)["any_width"]  # 40 log3(17) = 103.1 < 133.01


def test_corollary1_bert_large_example_as_written():
    # target 133.00998 (above); L_s = 2: 4 log3(d + 16) = target -> d = 3^(target/4) - 16
    r2 = bounds.corollary1_width(1000, 16, 6, 2)
    assert r2["width"] == pytest.approx(3 ** (133.00997632619237 / 4) - 16, rel=1e-9)
    assert 7.3e15 < r2["width"] < 7.4e15
    r3 = bounds.corollary1_width(1000, 16, 6, 3)
    assert 7.6e4 < r3["width"] < 7.7e4  # 3^(133.01/13) - 16
    # The paper states ~2e17 and ~2e5: not what eq. (7) as printed gives.
    assert r2["width"] < 1.5e17 and r3["width"] < 1.5e5


def test_corollary1_readings_and_paper_targets():
    rows = {r["reading"]: r for r in bounds.corollary1_readings()}
    assert rows["as_written"]["width_Ls2"] == pytest.approx(bounds.corollary1_width(1000, 16, 6, 2)["width"])
    assert rows["deep_natural_log"]["log3_sep_target"] == pytest.approx(133.00997632619237 * math.log(3))
    assert rows["paper"]["width_Ls2"] == 2e17 and rows["paper"]["width_Ls3"] == 2e5
    t = bounds.corollary1_paper_targets()
    lo, hi = t["both"]
    # 4 log3(1.5e17 + 16) and 4 log3(2.5e17 + 16), by hand: 4 * 36.0 and 4 * 36.46
    assert lo == pytest.approx(4 * log3(1.5e17 + 16)) and hi == pytest.approx(4 * log3(2.5e17 + 16))
    assert not lo <= rows["as_written"]["log3_sep_target"] <= hi  # the discrepancy is real


# ---------------------------------------------------------------------------------------------
# Corollary 2

def test_corollary2_by_hand_and_constant_is_explicit():
    # d_x = 81, H = 3, L = 8 > log3 81 = 4: beta1 = 4/8; beta2 = c ln 3 ln 81 ln 8
    r = bounds.corollary2(81, 3, 8, constant=1.0)
    assert r["beta1"] == pytest.approx(0.5)
    b2 = math.log(3) * math.log(81) * math.log(8)
    assert r["beta2"] == pytest.approx(b2)
    assert r["shallow_depth"] == pytest.approx(0.5 * 8 + b2)
    assert r["log10_shallow_width"] == pytest.approx(b2 * math.log10(3) + math.log10(81))
    r2 = bounds.corollary2(81, 3, 8, constant=2.0)
    assert r2["beta2"] == pytest.approx(2 * b2)
    with pytest.raises(InputError, match="constant"):
        bounds.corollary2(81, 3, 8, constant=0)


def test_corollary2_smallest_constant_is_the_edge():
    c = bounds.corollary2_smallest_constant(1024, 16, 12)
    assert bounds.corollary2(1024, 16, 12, c)["holds"]
    assert not bounds.corollary2(1024, 16, 12, c * 0.99)["holds"]
    assert bounds.corollary2_smallest_constant(1024, 1, 12) is None


# ---------------------------------------------------------------------------------------------
# Command line (its output; bad input is tested in test_cli.py)

def run_cli(capsys, *args):
    assert cli.main(list(args)) == 0
    return capsys.readouterr().out


def test_cli_bounds_text_and_json(capsys):
    out = run_cli(capsys, "bounds", "--width", "1000", "--heads", "16", "--depth", "6")
    assert "depth-efficient" in out and "133.01" in out and "6.2877" in out
    assert "note: heads 16 do not divide width 1000" in out
    out = json.loads(run_cli(capsys, "bounds", "--width", "1024", "--heads", "16", "--depth", "12", "--json"))
    assert out["regime"] == "depth-inefficient" and out["theorem"] == 2 and out["note"] is None
    assert out["log3_sep"]["lower"] == pytest.approx(bounds.theorem2_lower(12, 1024, 16))


def test_cli_corollary1(capsys):
    out = json.loads(run_cli(capsys, "corollary1", "--width", "1000", "--heads", "16", "--depth", "6",
                             "--shallow-depth", "2", "--json"))
    # the deep network's width stays under "width"; the shallow one's is "shallow_width"
    r = bounds.corollary1_width(1000, 16, 6, 2)
    assert out["width"] == 1000 and out["depth"] == 6 and out["shallow_depth"] == 2
    assert out["shallow_width"] == pytest.approx(r["width"]) and out["log10_shallow_width"] == r["log10_width"]
    out = run_cli(capsys, "corollary1", "--width", "1000", "--heads", "16", "--depth", "6", "--shallow-depth", "3")
    assert "needs width >= 76,136 (log10 4.8816)" in out  # written as the book writes numbers
    assert max(len(line) for line in out.splitlines()) <= cli_format.WRAP  # fits the book's code column
    out = run_cli(capsys, "corollary1", "--width", "1000", "--heads", "16", "--depth", "6", "--shallow-depth", "5")
    assert "of any width reaches it" in out and "needs width" not in out
