"""Whether a split between a shape's seeds follows the code: the runs trained again (the sweep's
parity files) set against the stored ones, said only as far as they go."""

from dwlib import fmt
from dwlib.book import pairs_verdicts as pv
from dwlib.experiments.records import stored_results


def _split_shapes():
    return [g for g in pv.seed_groups("cpu-pairs") if g["split"]]


def test_every_split_shape_trained_at_two_commits_is_named_with_its_retraining_or_its_absence():
    text = pv.retrained_sentence("cpu-pairs")
    records = {(r["depth"], r["target_budget"], r["seed"]): r for r in stored_results("cpu-pairs") if r.get("chosen")}
    retrained = {x["key"]: x for x in pv._retrained_runs("cpu-pairs")}
    for g in _split_shapes():
        commits = {s: records[(g["depth"], g["target_budget"], s)]["git_commit"].split("+")[0]
                   for s in [*g["select"], *g["others"]]}
        if {commits[s] for s in g["select"]} == {commits[s] for s in g["others"]}:
            continue
        where = f"the {g['depth']}-layer network at {fmt.count(g['target_budget'])}"
        assert where in text
        keys = [records[(g["depth"], g["target_budget"], s)]["key"] for s in g["others"]]
        if all(k in retrained for k in keys):
            live = sorted(retrained[k]["eval_loss_live"] for k in keys)
            assert f"{live[0]:.3f} to {live[-1]:.3f}" in text
        else:
            assert f"of {where}, which have not been trained again" in text


def test_the_split_is_called_no_change_of_code_only_when_every_retrained_group_lands_where_it_was(monkeypatch):
    runs = pv._retrained_runs("cpu-pairs")
    assert "the split does not come from the code" in pv.retrained_sentence("cpu-pairs")
    g = _split_shapes()[0]
    select = list(g["select"].values())
    among = [{**x, "eval_loss_live": (min(select) + max(select)) / 2} for x in runs]  # the seeds land among the others
    monkeypatch.setattr(pv, "_retrained_runs", lambda sweep: among)
    assert "does not come from the code" not in pv.retrained_sentence("cpu-pairs")
