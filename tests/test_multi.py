"""dwlib.train.multi: runs trained together (vmap over runs, scan over steps) compute what each
computes alone, keep a diverging run from touching the others, and resume bit for bit."""

import jax
import numpy as np
import orbax.checkpoint as ocp
import pytest

from dwlib.errors import InputError
from dwlib.train.config import TrainConfig
from dwlib.train.loop import train
from dwlib.train.multi import train_group
from dwlib.train.rundir import read_metrics


def tiny(corpus, **kw):
    base = dict(depth=1, width=32, heads=2, vocab_size=300, seq_len=32, batch_size=4, steps=12, lr=3e-3,
                eval_interval=4, eval_batches=2, checkpoint_interval=0, corpus=corpus)
    return TrainConfig.from_dict({**base, **kw})


def test_a_group_computes_what_each_run_computes_alone_and_a_diverging_run_stays_apart(corpus, tmp_path):
    cfgs = [tiny(corpus, seed=0, lr=3e-3), tiny(corpus, seed=1, lr=1e-2), tiny(corpus, seed=0, lr=1e30)]
    _, curves = train_group(cfgs, chunk=4, progress=False)
    for i, cfg in enumerate(cfgs[:2]):
        train(cfg.replace(out_dir=str(tmp_path / str(i))), progress=False, verbose=False)
        losses, evals = read_metrics(tmp_path / str(i))
        assert len(curves[i]["losses"]) == len(losses) == 12 and curves[i]["diverged_step"] is None
        # Same batches, same initialisation, same updates: equal up to float rounding (the rate
        # is applied as peak x unit schedule; the single run splits its batch over CPU devices).
        # The third run diverges beside them and changes nothing in theirs.
        np.testing.assert_allclose(curves[i]["losses"], losses, rtol=2e-5, atol=0)
        assert [e["step"] for e in curves[i]["evals"]] == [e["step"] for e in evals] == [0, 4, 8, 12]
        np.testing.assert_allclose([e["eval_loss"] for e in curves[i]["evals"]], [e["eval_loss"] for e in evals],
                                   rtol=2e-5, atol=0)
    assert curves[0]["losses"][-1] != curves[1]["losses"][-1]  # seed and rate matter: not one curve twice
    assert curves[2]["diverged_step"] is not None and len(curves[2]["losses"]) < 12


def test_a_group_resumed_from_a_checkpoint_equals_an_uninterrupted_one(corpus, tmp_path):
    cfgs = [tiny(corpus, seed=s) for s in (0, 1)]
    _, whole = train_group(cfgs, chunk=2, progress=False)
    state, first = train_group(cfgs, chunk=2, stop_at=6, progress=False)
    with ocp.StandardCheckpointer() as ckpt:  # a real round trip through the disk
        ckpt.save(tmp_path / "ckpt", {"params": state["params"], "opt_state": state["opt_state"]})
        ckpt.wait_until_finished()
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, {"params": state["params"],
                                                                 "opt_state": state["opt_state"]})
        restored = ckpt.restore(tmp_path / "ckpt", abstract)
    _, rest = train_group(cfgs, chunk=2, state={**restored, "step": 6}, progress=False)
    for w, a, b in zip(whole, first, rest):
        assert a["losses"] + b["losses"] == w["losses"]  # bit for bit
        assert a["evals"] + b["evals"] == w["evals"]


def test_runs_of_different_shapes_are_refused(corpus):
    with pytest.raises(InputError, match="share every setting but seed and lr"):
        train_group([tiny(corpus), tiny(corpus, width=64)], progress=False)
    with pytest.raises(InputError, match="chunk must be an integer >= 1"):
        train_group([tiny(corpus)], chunk=0, progress=False)
