"""The vocabulary chapter's stored measurements (a quick subset recomputed), and
``dwlib seprank --embedding-rank``: the measurement with the derived bounds, bad input in one line."""

from __future__ import annotations

import json
import math

import pytest

from dwlib import cli
from dwlib.core import vocab
from dwlib.experiments import vocab_sweep


def _key(m):
    return (m["depth"], m["width"], m["heads"], m["embedding_rank"])


def test_quick_sweep_reproduces_the_stored_ranks():
    stored = vocab_sweep.load()
    by_shape = {_key(m): m for part in ("width", "depth") for m in stored[part]}
    quick = vocab_sweep.sweep(quick=True, log=lambda *_: None)
    fresh = quick["width"] + quick["depth"]
    assert len(fresh) == 3
    for m in fresh:
        old = by_shape[_key(m)]
        for k in ("rank", "ranks", "history", "matrix_shape", "grid_cap", "upper", "poly_dim", "log3_upper_rank",
                  "log3_upper_eq8_rank", "log3_upper_full"):
            assert m[k] == old[k], k


def test_stored_sweep_is_consistent_with_the_derivation():
    data = vocab_sweep.load()
    records = data["width"] + data["depth"] + data["capped"]
    assert len(records) == len(vocab_sweep.WIDTH_SHAPES) + len(vocab_sweep.DEPTH_SHAPES) + len(
        vocab_sweep.CAPPED_SHAPES)
    for m in records:
        assert m["agree"] and m["rank"] <= min(m["upper"], m["grid_cap"], *m["matrix_shape"])
        assert m["log3_upper_eq8_rank"] is None or math.log(m["rank"], 3) <= m["log3_upper_eq8_rank"]
        if m["depth"] == 1:
            assert m["rank"] == m["embedding_rank"] + 1
        if m["embedding_rank"] == 1:
            assert m["rank"] == (3 ** m["depth"] + 1) // 2
    for m in data["width"] + data["depth"]:
        assert m["saturated"] and not m["capped"]
    assert all(m["capped"] for m in data["capped"])
    # at fixed r and depth, every width whose heads hold r gives one rank: the full-rank network of width r
    full = {(m["depth"], m["width"]): m["rank"] for m in data["width"] if m["width"] == m["embedding_rank"]}
    for m in data["width"] + data["depth"]:
        if m["width"] // m["heads"] >= m["embedding_rank"] and (m["depth"], m["embedding_rank"]) in full:
            assert m["rank"] == full[(m["depth"], m["embedding_rank"])]


def test_cli_measures_with_an_embedding_rank(capsys):
    args = ["seprank", "--depth", "2", "--width", "4", "--heads", "2", "--embedding-rank", "1", "--templates", "8"]
    assert cli.main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rank"] == 5 and out["embedding_rank"] == 1 and out["tokens"] == 8
    assert out["poly_dim"] == vocab.upper_bound(2, 1, 2, 2) < out["poly_dim_full_width"]
    assert out["log3_upper_rank"] == pytest.approx(math.log(out["poly_dim"], 3))
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "embedding rank r=1, vocabulary V=8" in text and "grid rank 5" in text


@pytest.mark.parametrize("extra,message", [
    (["--embedding-rank", "5"], "--embedding-rank must be an integer from 1 to the width 4, got 5"),
    (["--embedding-rank", "0"], "--embedding-rank must be an integer from 1 to the width 4, got 0"),
    (["--embedding-rank", "2", "--residual"], "without the residual connection"),
    (["--embedding-rank", "3", "--templates", "2"], "at least the embedding rank 3"),
    (["--embedding-rank", "2", "--heads", "3"], "heads must divide width"),
    (["--embedding-rank", "2", "--templates", "100"], "grid points"),
])
def test_cli_bad_embedding_input_is_one_line_exit_2(capsys, extra, message):
    args = ["seprank", "--depth", "1", "--width", "4", "--heads", "2"]
    if "--heads" in extra:
        args = args[:5]
    assert cli.main(args + extra) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_cli_refuses_embedding_rank_with_the_plain_sweep(capsys):
    assert cli.main(["seprank", "--sweep", "--embedding-rank", "2"]) == 2
    assert "--embedding-rank does nothing with --sweep" in capsys.readouterr().err



def test_cli_grows_the_vocabulary_until_the_rank_stops(capsys):
    assert cli.main(["seprank", "--depth", "1", "--width", "6", "--heads", "2", "--embedding-rank", "3", "--json",
                     "--draws", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rank"] == 4 and out["saturated"] and out["history"][0][0] == 4  # V starts at 4 >= r
    assert out["estimated_seconds"] > 0 and out["theorem"] in (1, 2)
