"""bench/scoring.py runs end to end on a few real questions (the full benchmark is run by hand)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "scoring.py"

pytestmark = [pytest.mark.shared_data, pytest.mark.slow, pytest.mark.heavy]


def run_bench(shared_data, *args) -> str:
    env = {**os.environ, "WELLCHOSEN_SHARED_DATA": str(shared_data)}
    done = subprocess.run(
        [sys.executable, str(BENCH), "--vocab", "1000", "--threads", "1", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_bench_gpu_mode_script_path_runs_on_a_tiny_llama_without_lm_eval(shared_data):
    # when the Llama-shaped path runs on a few questions, with the naive check
    out = run_bench(shared_data, "--preset", "tiny-llama", "--questions", "12", "--no-lm-eval", "--check", "6")
    # then it prints throughput, a FLOP rate and a fast/naive agreement
    assert "questions: 12 x 4 candidates" in out
    assert "TFLOP/s" in out and "candidates/s" in out
    assert "same selection 6/6" in out
    assert "lm-eval: skipped" in out


def test_bench_selections_match_lm_eval_under_the_same_rule(shared_data):
    pytest.importorskip("lm_eval", reason="lm-eval is in the optional 'bench' extra")
    # when ours and lm-eval score the same questions with the same model
    out = run_bench(shared_data, "--preset", "small", "--questions", "10", "--lm-eval-batch-size", "8")
    # then the summed-log-prob selections are identical
    assert "identical for 10/10 questions" in out
    assert "throughput ratio" in out
    # and the ratio is split into FLOPs and FLOP rate: sharing each context over 4 candidates and
    # the head at candidate positions only need over 2x fewer FLOPs than lm-eval's requests
    fewer = re.search(r"lm-eval at least [\d.]+ T: ([\d.]+)x fewer", out)
    assert fewer is not None and float(fewer.group(1)) > 2


def test_bench_times_several_batch_budgets_and_profiles_on_one_scorer(shared_data):
    # when two token budgets are timed and a profiled run follows
    budgets = ["--batch-tokens", "64,512", "--profile"]
    out = run_bench(shared_data, "--preset", "tiny-llama", "--questions", "12", "--no-lm-eval", *budgets)
    # then each budget has its own report with its padding share, and the profile names operators
    assert "64 tokens per batch" in out and "512 tokens per batch" in out
    assert len(re.findall(r"of them padding", out)) == 2
    assert "profile of one run" in out and "aten::" in out
