"""The throughput benchmark's pieces run (the figures themselves are printed, never asserted)."""

import importlib.util
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("train_throughput", ROOT / "benchmarks" / "train_throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_flop_count_follows_the_reference_formula(bench):
    # 6 (12 L d^2 + V d) + 12 L T d, the formula of ../shared/bench/torch_reference.py
    assert bench.flops_per_token(1000, 1024, 12, 768) == 6 * (12 * 12 * 768 ** 2 + 1000 * 768) + 12 * 12 * 1024 * 768


def test_step_timer_and_attention_check_run_on_a_small_shape(bench):
    best, first = bench.time_dwlib(1, 32, 2, steps=2, warmup=1, seq=16, batch_size=4, dtype="bfloat16")
    assert 0 < best <= first  # the first step includes compilation
    err = bench.fused_attention_error(batch=1, seq=32, heads=2, head_size=16)
    assert 0 < err < 2e-2 and math.isfinite(err)  # bfloat16 rounding of the inputs' products


def test_torch_alone_without_a_reference_says_so(bench, capsys):
    assert bench.main(["--torch-alone", "--torch-reference", "/nonexistent/torch_reference.py"]) == 2
    assert "/nonexistent/torch_reference.py" in capsys.readouterr().err
