"""Where a sweep's runs trained, as the experiments chapter states it: one machine named plainly;
runs split between machines counted per size, with the stored check that a run's result does not
depend on the machine (runs trained again on the other one) set against the seeds' spread."""

import json

import pytest

from dwlib.book import figure2
from dwlib.experiments.records import stored_results

CPU = {"backend": "cpu", "device_kind": "cpu", "devices": 2, "processes": 1, "cpu_count": 2}
GPU = {"backend": "gpu", "device_kind": "NVIDIA H200", "devices": 1, "processes": 1, "cpu_count": 16}


def _runs(*rows):
    return [{"hardware": hw, "target_budget": b, "config": {"dtype": "float32"}, "key": f"k{i}", "depth": depth,
             "seed": seed, "chosen": True} for i, (hw, b, depth, seed) in enumerate(rows)]


def test_one_machine_is_named_from_the_records():
    records = stored_results("cpu-pairs")
    machines = {(r["hardware"]["backend"], r["hardware"]["cpu_count"]) for r in records}
    if machines == {("cpu", 2)}:
        assert figure2.hardware_sentence("cpu-pairs") == "The tied doubling-pairs sweep trains on a 2-core CPU in float32."
    else:  # published with runs from another machine: counted, with the stored check
        assert "of its runs on a 2-core CPU and" in figure2.hardware_sentence("cpu-pairs")
    assert figure2.hardware_sentence("gpu-slice") == "The GPU pilot trains on one NVIDIA H200 in bfloat16."


def test_runs_split_between_machines_are_counted_per_size_with_the_parity_check(monkeypatch):
    # at 1.6M seed 0 pairs a CPU run with a GPU run, seed 1 two GPU runs: some gaps mix machines
    runs = _runs((CPU, 1e5, 2, 0), (CPU, 1e5, 4, 0), (CPU, 1.6e6, 2, 0), (GPU, 1.6e6, 4, 0), (GPU, 1.6e6, 2, 1),
                 (GPU, 1.6e6, 4, 1))
    monkeypatch.setattr(figure2, "stored_results", lambda name: runs)
    parity = {"runs": [{}] * 6, "largest_abs_diff": {"eval_loss": 0.00031}}
    monkeypatch.setattr(figure2, "packaged_json", lambda *parts: parity)
    monkeypatch.setattr(figure2, "_seed_std", lambda name: 0.0512)
    text = figure2.hardware_sentence("cpu-pairs")
    assert text.startswith("The tied doubling-pairs sweep trains in float32: 3 of its runs on a 2-core CPU and "
                           "3 on one NVIDIA H200 (3 of the 4 runs at 1.6M).")
    assert "six runs first trained on a 2-core CPU matched their held-out losses within 0.00031 nats" in text
    assert "a median spread of 0.051 nats" in text
    assert "At 1.6M, where some gaps pair runs from two machines" in text  # the one size with both
    assert "a machine difference of 0.00031 nats in each run moves a gap by at most 0.00062" in text
    # every gap of a size mixing machines is said as every gap
    runs[:] = runs[:4]
    assert "At 1.6M, where every gap pairs runs from two machines" in figure2.hardware_sentence("cpu-pairs")
    # a device's name without its memory
    assert figure2._machine({"backend": "gpu", "device_kind": "NVIDIA H100 80GB HBM3", "devices": 1}) == \
        "one NVIDIA H100"

    def missing(*parts):
        raise FileNotFoundError(parts)
    monkeypatch.setattr(figure2, "packaged_json", missing)
    assert figure2.hardware_sentence("cpu-pairs").endswith("No run was trained on both to compare them.")


@pytest.mark.parametrize("sweep", ["cpu-pairs", "cpu-pairs-untied"])
def test_the_stored_parity_check_is_the_runs_it_names(sweep):
    """The parity file's stored losses are those of the published runs of the same keys."""
    from dwlib.store import packaged_text
    parity = json.loads(packaged_text("sweeps", f"{sweep}.parity.json"))
    published = {r["key"]: r for r in stored_results(sweep)}
    assert parity["preset"] == sweep and len(parity["runs"]) == 6
    for run in parity["runs"]:
        assert run["eval_loss_stored"] == pytest.approx(published[run["key"]]["eval_loss"], abs=1e-12)
        assert abs(run["eval_loss_live"] - run["eval_loss_stored"]) <= parity["largest_abs_diff"]["eval_loss"]
