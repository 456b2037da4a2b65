"""Rank collapse (dwlib.core.collapse), induction heads (dwlib.experiments.induction), the
Context chapter's stored data against recomputations, and its charts (dwlib.viz.context)."""

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dwlib.core import collapse
from dwlib.errors import InputError
from dwlib.experiments import context, induction
from dwlib.viz import context as charts


def _curve(rows, variant):
    return np.array([r["residual"] for r in rows if r["variant"] == variant])


# --- rank collapse ----------------------------------------------------------------------------

def test_rank_residual_is_zero_for_equal_rows_and_one_for_zero_mean():
    row = jnp.arange(5.0)
    assert collapse.rank_residual(jnp.tile(row, (4, 1))) == pytest.approx(0.0, abs=1e-7)
    x = jnp.array([[1.0, 2.0], [-1.0, -2.0]])
    assert collapse.rank_residual(x) == pytest.approx(1.0)
    # the mean row is the minimiser: any other common row leaves a larger distance
    x = jax.random.normal(jax.random.PRNGKey(1), (6, 3))
    best = np.linalg.norm(x - x.mean(0)) / np.linalg.norm(x)
    other = np.linalg.norm(x - (x.mean(0) + 0.1)) / np.linalg.norm(x)
    assert collapse.rank_residual(x) == pytest.approx(best, rel=1e-5) and other > best
    assert collapse.rank_residual(jnp.stack([x, 2 * x])).shape == (2,)


def test_rank_residual_rejects_single_position():
    with pytest.raises(InputError, match="N >= 2"):
        collapse.rank_residual(jnp.ones((1, 3)))


@pytest.fixture(scope="module")
def curves():
    return collapse.collapse_curves(depth=8, width=32, heads=4, n_positions=16)


def test_pure_attention_collapses_fast(curves):
    pure = _curve(curves, "pure attention")
    assert pure[0] > 0.9
    assert pure[3] < 1e-4 and pure[5] < 1e-12  # many orders of magnitude within a few layers
    # faster than geometric: the log of the residual falls by more each layer (until rounding)
    drops = -np.diff(np.log(pure[:4]))
    assert np.all(np.diff(drops) > 0)


def test_residual_connection_prevents_collapse(curves):
    pure, res = _curve(curves, "pure attention"), _curve(curves, "attention + residual")
    assert np.all(res > 0.3)
    assert res[-1] > 1e6 * pure[-1]


def test_collapse_grid_shape_and_stored_grid_matches_a_recomputation():
    stored = context.load_collapse_grid()
    s = stored["settings"]
    assert len(stored["rows"]) == len(collapse.VARIANTS) * (s["depth"] + 1) * sum(
        1 for w in s["widths"] for h in s["heads"] if w % h == 0)
    fresh = collapse.collapse_curves(s["depth"], 16, 2, s["n_positions"], variants=("attention + residual",),
                                    seed=s["seed"])
    old = [r for r in stored["rows"] if r["width"] == 16 and r["heads"] == 2 and r["variant"] == "attention + residual"]
    np.testing.assert_allclose([r["residual"] for r in fresh], [r["residual"] for r in old], rtol=1e-3)


def test_the_stored_grids_variants_are_the_named_ones_as_a_reader_reads_them():
    """The stored grid names each variant as :data:`VARIANTS` does (its rows are keyed by
    them), and a range of equations takes an en dash, not a hyphen."""
    assert {r["variant"] for r in context.load_collapse_grid()["rows"]} == set(collapse.VARIANTS)
    assert "paper layer (eqs. 1\N{EN DASH}2)" in collapse.VARIANTS
    assert not any("-" in v for v in collapse.VARIANTS)


def test_collapse_rejects_bad_shapes():
    with pytest.raises(InputError, match="heads must divide width"):
        collapse.collapse_curves(depth=2, width=10, heads=3)
    with pytest.raises(InputError, match="variant"):
        collapse.collapse_curves(depth=2, width=8, heads=2, variants=("no such",))


# --- induction heads --------------------------------------------------------------------------

def test_repeated_batch_repeats_with_its_period():
    tokens, periods = induction.repeated_batch(jax.random.PRNGKey(0), 8, 30, 50, 5, 12)
    tokens, periods = np.asarray(tokens), np.asarray(periods)
    assert tokens.shape == (8, 30) and np.all((5 <= periods) & (periods <= 12))
    for seq, T in zip(tokens, periods):
        assert np.array_equal(seq[T:], seq[:30 - T])


def test_attention_patterns_are_causal_distributions():
    params = induction.init_attention_only(jax.random.PRNGKey(0), 2, 16, 2, 10, 12)
    tokens, _ = induction.repeated_batch(jax.random.PRNGKey(1), 3, 12, 10, 3, 5)
    logits, patterns = induction.attention_only_forward(params, tokens, return_patterns=True)
    assert logits.shape == (3, 12, 10) and len(patterns) == 2
    p = np.asarray(patterns[0])
    assert p.shape == (3, 2, 12, 12)
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-5)
    assert np.allclose(np.triu(p, k=1), 0.0)


def test_two_layers_learn_the_repeat_and_one_layer_does_not():
    # a tiny, quick version of the chapter's experiment (a few seconds on CPU)
    r = induction.train_induction(steps=300, eval_batch=64, log_every=300)
    one, two = r["runs"]
    assert (one["depth"], two["depth"]) == (1, 2)
    assert two["loss"] < 0.5 * one["loss"] and one["loss"] > 1.5
    assert max(two["scores"]["induction"][1]) > 0.3 > max(one["scores"]["induction"][0])


def test_stored_induction_result():
    r = induction.load_induction()
    one, two = r["runs"]
    assert r["chance_loss"] == pytest.approx(math.log(r["config"]["vocab"]))
    assert two["loss"] < 0.5 < one["loss"]
    n = r["config"]["n_positions"]
    pattern = np.array(two["example"]["pattern"])
    assert pattern.shape == (n, n)
    T = two["example"]["period"]
    t = np.arange(T, n)
    assert pattern[t, t - T + 1].mean() > 0.3  # the induction diagonal


def test_stored_induction_loss_before_training_matches_a_recomputation():
    # the untrained models' loss on the held-out batch depends on the initialisation, the data
    # and the forward pass only: one step of training recomputes it
    stored = induction.load_induction()
    cfg = {k: v for k, v in stored["config"].items()}
    cfg.update(steps=1, log_every=1)
    fresh = induction.train_induction(**cfg)
    for old, new in zip(stored["runs"], fresh["runs"]):
        assert new["curve"][0]["loss"] == pytest.approx(old["curve"][0]["loss"], rel=1e-5)


def test_train_induction_rejects_unknown_settings():
    with pytest.raises(InputError, match="unknown settings"):
        induction.train_induction(layers=3)
    with pytest.raises(InputError, match="max_period"):
        induction.train_induction(max_period=60)


# --- quoted tables ----------------------------------------------------------------------------

def test_quoted_tables_carry_their_sources():
    brown = context.quoted_table("brown2022wide")
    assert brown.attrs["source"] == "brown2022wide"
    avg = brown[(brown["attention"] == "Average") & (brown["task"] == "Average")]
    assert (float(avg["deep"].iloc[0]), float(avg["wide"].iloc[0])) == (61.0, 61.3)
    liu = context.quoted_table("liu2020very")
    assert liu.attrs["source"] == "liu2020very"
    with pytest.raises(InputError, match="no quoted table"):
        context.quoted_table("nope")


def test_collapse_chart_binds_width_and_heads_sliders():
    rows = context.load_collapse_grid()["rows"]
    spec = charts.collapse_chart(rows).to_dict()
    bound = {p["name"] for p in spec["params"] if "bind" in p}
    assert bound == {"log2_width", "log2_heads"}
    with pytest.raises(InputError, match="not in the grid"):
        charts.collapse_chart(rows, width=48)


def test_collapse_chart_tells_the_variants_apart_by_shape_too():
    """Colour-blind readers: each variant a point shape as well as a colour, in one legend."""
    rows = context.load_collapse_grid()["rows"]
    text = json.dumps(charts.collapse_chart(rows).to_dict())
    for colour, shape in charts.VARIANT_STYLE.values():
        assert f'"{shape}"' in text and f'"{colour}"' in text
    assert len({s for _, s in charts.VARIANT_STYLE.values()}) == len(charts.VARIANT_STYLE)
