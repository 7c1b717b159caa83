"""What bench/scoring.py prints about one timed run of our scoring core: rates, padding, the FLOP
rate against the GPU's peak, and a profile of where the time goes."""

import time

import torch

from evaluation.scoring.lm import LMScorer
from evaluation.scoring.packed import packed_batches, packed_length


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def padded_tokens(scorer: LMScorer, encoded) -> int:
    """Tokens the packed body computes: each batch's rows padded to its longest row."""
    batches = packed_batches(encoded, batch_tokens=scorer.batch_tokens)
    return sum(len(b) * max(packed_length(encoded[i]) for i in b) for b in batches)


def report_ours(args, scorer: LMScorer, model, questions, ours_s: float, counts: dict, budget: int) -> float:
    """Print one timed run's rates and FLOP rate; returns the run's forward FLOPs."""
    n_cands = sum(len(q[1]) for q in questions)
    processed = counts["processed_tokens"]
    compiled = ", torch.compile'd body" if scorer.body is not None else ", eager"
    print(f"\nours ({args.strategy} fast path{compiled}, {budget} tokens per batch):")
    print(
        f"ours: {ours_s:.2f} s, {len(questions) / ours_s:.1f} questions/s, {n_cands / ours_s:.1f} candidates/s, "
        f"{processed / ours_s:,.0f} tokens/s processed ({counts['naive_tokens'] / ours_s:,.0f} tokens/s "
        "naive-equivalent: every context counted once per candidate)"
    )
    if scorer.strategy == "packed":
        encoded = scorer.encode([scorer.render(q[0]) for q in questions], [q[1] for q in questions])
        padded = padded_tokens(scorer, encoded)
        print(f"ours: {padded:,} tokens computed with padding, {1 - processed / padded:.1%} of them padding")
    n_params = sum(p.numel() for p in model.parameters())
    embedding = model.get_input_embeddings().weight.numel()
    head = model.get_output_embeddings().weight
    body = n_params - embedding - (0 if head is model.get_input_embeddings().weight else head.numel())
    # forward FLOPs ~ 2 x parameters x tokens: the body over every processed token, the output
    # head only where a candidate token is scored (attention's own FLOPs are left out)
    packed = getattr(scorer.packed_body, "module", scorer.packed_body)  # a CompiledBody's eager twin has its shape
    trimmed = getattr(packed, "trimmed", None)
    last_mlp = sum(p.numel() for p in trimmed.mlp.parameters()) if trimmed is not None else 0
    flops = (
        2 * body * processed
        + 2 * head.numel() * counts["candidate_tokens"]
        - 2 * last_mlp * counts["mlp_skipped_tokens"]
    )
    achieved = flops / ours_s / 1e12
    line = (
        f"ours: {achieved:.2f} TFLOP/s (2 x body params x processed tokens + 2 x head params x candidate tokens "
        "- 2 x last MLP params x context tokens it skips)"
    )
    if args.device.startswith("cuda"):
        line += (
            f" = {achieved / args.peak_tflops:.1%} of a {args.peak_tflops:.0f} TFLOP/s bf16 peak; "
            f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB"
        )
    print(line)
    return flops


def profile_ours(scorer: LMScorer, questions, device: str) -> None:
    """One more run under torch.profiler: where the time goes (the kernels on a GPU)."""
    from torch.profiler import ProfilerActivity, profile

    encoded = scorer.encode([scorer.render(q[0]) for q in questions], [q[1] for q in questions])
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    sync(device)
    start = time.perf_counter()
    with profile(activities=activities) as prof:
        scorer.score_encoded(encoded)
        sync(device)
    wall = time.perf_counter() - start
    sort = "cuda_time_total" if device.startswith("cuda") else "cpu_time_total"
    print(f"\nprofile of one run ({wall:.2f} s under the profiler), by {sort}:")
    print(prof.key_averages().table(sort_by=sort, row_limit=18, max_name_column_width=70))
    if device.startswith("cuda"):
        kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
        busy = sum(e.device_time for e in kernels) / 1e6
        print(f"GPU kernel time {busy:.3f} s of {wall:.3f} s wall: the GPU was busy {busy / wall:.0%} of the run")
