"""dwlib.viz.bounds: the charts draw what dwlib.core.bounds computes, the Vega ports that run
in the static page agree with it on a grid, and the live explorers react to their sliders."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from dwlib import fmt
from dwlib.core import bounds
from dwlib.viz import bounds as vb

# ---------------------------------------------------------------------------------------------
# Vega ports against dwlib.core.bounds


def _objects(node):
    """Every object (dict) of a chart's spec, depth first, nested layers and concatenations included."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _objects(v)
    elif isinstance(node, list):
        for v in node:
            yield from _objects(v)


def _calculates(spec) -> dict:
    """Every ``calculate`` transform of a chart's spec, as {field: expression}."""
    out = {}
    for node in _objects(spec):
        if "calculate" in node and "as" in node:
            out.setdefault(node["as"], node["calculate"])
    return out


def _eval_vega(expr: str, **names):
    """A Vega expression of arithmetic, ``pow`` and ``log`` (natural) is also Python: evaluate
    it on numpy arrays."""
    with np.errstate(all="ignore"):
        return eval(expr, {"pow": np.power, "log": np.log, "round": np.round, "__builtins__": {}}, names)


def test_explorer_bounds_match_dwlib_on_a_grid():
    """The eq.-(7) and eq.-(8) expressions the explorer chart runs in the browser, against
    dwlib.core.bounds, over depths 1 to 40, widths 20 to 1e6 and heads 1 to 64."""
    expr = _calculates(vb.bounds_explorer_chart().to_dict())
    L, w, H = np.meshgrid(np.arange(1.0, 40.0, 0.25), np.geomspace(20, 1e6, 25), np.array([1, 4, 16, 64]),
                          indexing="ij")
    w = np.round(w)  # the explorer's width is an integer, 2^log2_width rounded
    names = dict(datum=SimpleNamespace(L=L), log2_width=np.log2(w), heads=H)
    th = np.log(w) / np.log(3)
    t1, t2 = (L < th) & (H < w), (L > th) & (H < w)
    assert t1.sum() > 500 and t2.sum() > 5000
    for key, mask, ours in (("t1_lower", t1, bounds.theorem1_lower), ("t1_upper", t1, bounds.theorem1_upper),
                            ("t2_lower", t2, bounds.theorem2_lower), ("t2_upper", t2, bounds.theorem2_upper)):
        got = _eval_vega(expr[key], **names)[mask]
        np.testing.assert_allclose(got, ours(L[mask], w[mask], H[mask]), rtol=1e-9, err_msg=key)


def test_explorer_corollary1_matches_dwlib():
    """The explorer's Corollary-1 width (log10), against dwlib.core.bounds.corollary1_width,
    wherever the corollary gives a width."""
    cor1 = _calculates(vb.bounds_explorer_chart().to_dict())["cor1"]
    checked = 0
    for w in (100, 1000, 4096, 10**5, 10**6):
        for H in (1, 4, 16):
            for L in range(2, 13):
                for Ls in range(1, L):
                    try:
                        r = bounds.corollary1_width(w, H, L, Ls)
                    except Exception:  # outside Theorem 1, or a target that is not positive
                        continue
                    if r["any_width"]:
                        continue
                    got = _eval_vega(cor1, depth=L, shallow_depth=Ls, heads=H, log2_width=math.log2(w))
                    assert got == pytest.approx(r["log10_width"], rel=1e-9), (w, H, L, Ls)
                    checked += 1
    assert checked > 50


def test_threshold_chart_marker_matches_dwlib():
    expr = _calculates(vb.threshold_chart().to_dict())["threshold"]
    widths = np.geomspace(10, 2e5, 50)
    np.testing.assert_allclose(_eval_vega(expr, datum=SimpleNamespace(width=widths)),
                               bounds.depth_threshold(widths), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Charts

def test_bounds_chart_draws_the_computed_bounds():
    spec = vb.bounds_chart(widths=(81, 1000), heads=3, depth_range=(1, 12)).to_dict()
    values = next(iter(spec["datasets"].values()))
    lo = [v for v in values if v["width"] == "1,000" and v["bound"] == "lower" and v["depth"] == 5.0]
    assert len(lo) == 1 and lo[0]["log3_sep"] == pytest.approx(bounds.theorem1_lower(5, 1000, 3), rel=1e-6)
    assert all(v["log3_sep"] > 0 for v in values)
    assert not any(v["width"] == "d_x = 81" and v["depth"] == 4.0 for v in values)  # on the threshold


def test_bounds_chart_names_its_lines_in_the_order_of_the_widths_given():
    # The line labels sit at each upper line's deepest point, all at the same depth: a sort that
    # is not stable could order them (and the saved output) differently on another CPU (seen:
    # numpy's AVX-512 sort).
    widths = (64, 256, 1024, 4096)
    spec = vb.bounds_chart(widths=widths, heads=8, depth_range=(1, 24)).to_dict()
    ends = [values for values in spec["datasets"].values() if len(values) == len(widths) and "bound" in values[0]]
    assert [v["width"] for v in ends[0]] == [f"{w:,}" for w in widths]
    assert {v["depth"] for v in ends[0]} == {24.0}


def test_threshold_chart_has_a_bound_slider_and_places_the_models():
    spec = vb.threshold_chart([{"name": "BERT-large", "depth": 24, "width": 1024}]).to_dict()  # validates
    params = [p for p in spec.get("params", []) if "bind" in p]
    assert params and params[0]["bind"]["input"] == "range"
    assert "BERT-large" in json.dumps(spec)


@pytest.mark.parametrize("width_range", [(300, 3e4), (10, 1e5), (333, 4321)])
def test_threshold_slider_starts_on_its_step_grid(width_range):
    """The range input's start (log10 width 3) is min + a whole number of steps: a browser
    snaps a value off that grid, so the slider could not come back to where it started."""
    spec = vb.threshold_chart([{"name": "BERT-large", "depth": 24, "width": 1024}], width_range=width_range).to_dict()
    (p,) = [p for p in spec["params"] if "bind" in p]
    b = p["bind"]
    steps = (p["value"] - b["min"]) / b["step"]
    assert steps == pytest.approx(round(steps), abs=1e-9) and b["min"] <= p["value"] <= b["max"]
    assert 10 ** b["min"] >= width_range[0] and 10 ** b["max"] <= width_range[1]


def test_bounds_explorer_chart_binds_four_sliders():
    spec = vb.bounds_explorer_chart(width=1000, heads=16, depth=6, shallow_depth=2).to_dict()
    bound = {p["name"]: p for p in spec["params"] if "bind" in p}
    assert set(bound) == {"log2_width", "heads", "depth", "shallow_depth"}
    assert all(p["bind"]["input"] == "range" for p in bound.values())
    assert bound["log2_width"]["value"] == math.log2(1000) and bound["depth"]["value"] == 6


# ---------------------------------------------------------------------------------------------
# Live explorers

def test_threshold_explorer_reacts():
    box = vb.threshold_explorer(width=1000, depth=7)
    controls, panel = box.children[0].children, box.children[1]
    assert "6.29" in panel.value and "depth-inefficient" in panel.value  # log3(1000) = 6.2877 < 7
    assert "1,093" in panel.value  # C = (3^7 - 1) / 2
    controls[1].value = 5
    assert "depth-efficient" in panel.value and "121" in panel.value


def test_bounds_explorer_reacts():
    box = vb.bounds_explorer(width=1000, heads=16, depth=6, shallow_depth=2)
    controls, panel = box.children[0].children, box.children[1]
    assert "depth-efficient" in panel.value and "10<sup>15.87</sup>" in panel.value
    controls[2].value = 8  # depth above log3 1000
    assert "depth-inefficient" in panel.value and "Corollary 1 does not apply" in panel.value
    assert "&lt;" in panel.value  # messages are escaped
    assert "Not evaluated" in vb.bounds_panel(16, 16, 2, 1)


def test_bounds_panel_says_when_every_width_suffices():
    # Deep (1000, 16, 6), shallow depth 5: the shallow upper bound at width 1 already reaches the target.
    panel = vb.bounds_panel(1000, 16, 6, 5)
    assert fmt.any_width_sentence(5) in panel and "needs width" not in panel
    assert "needs width" in vb.bounds_panel(1000, 16, 6, 4)


def test_heads_note_only_when_heads_do_not_divide_the_width():
    assert fmt.heads_note(1024, 16) is None
    assert "do not divide" in fmt.heads_note(1000, 16)


def test_threshold_explorer_static_chart_says_what_the_live_panel_says():
    """The static book's form of the threshold explorer computes in Vega what its live panel
    computes in Python: the width from the slider, log3 of it, the regime and C = (3^L - 1)/2."""
    box = vb.threshold_explorer(width=1024, depth=7)
    spec = box.static.to_dict()
    params = {p["name"]: p for p in spec["params"]}
    assert params["log2_width"]["value"] == 10 and params["depth"]["value"] == 7  # the live explorer's 1,024
    expr = _calculates(spec)
    for log_w in (3.3, 8.0, 10.0, 13.35, 19.95):
        for L in (1, 5, 7, 24):
            width = _eval_vega(expr["width"].replace("round(", "np_round("), log2_width=log_w, np_round=round)
            assert width == int(round(2 ** log_w))
            th = _eval_vega(expr["th"], datum=SimpleNamespace(width=width))
            assert th == pytest.approx(float(bounds.depth_threshold(width)), rel=1e-12)
            assert _eval_vega(expr["C"], depth=L) == (3 ** L - 1) // 2
            which = bounds.regime(L, width)
            efficient = L < th and abs(L - th) > 1e-12
            assert which == ("depth-efficient" if efficient else "depth-inefficient")
            assert ("'depth-efficient (Theorem 1, eq. 7)'" in expr["line2"]
                    and "'depth-inefficient (Theorem 2, eq. 8)'" in expr["line2"])
