"""Benchmark: our scoring core against lm-evaluation-harness on the same model and questions.

Questions are built from real DailyDialog dialogues in ../shared/data (test, then validation):
the first 3 turns are the context, the 4th the ground truth, and 3 false candidates (--false) are
4th turns of other dialogues (seeded). The model is random-init and GPT-2-shaped (default 6 layers
x 512) with a byte-level BPE tokenizer trained on DailyDialog train; nothing is downloaded.

Side by side in one process: our fast path (shared context KV cache, output head at candidate
positions only) and lm-eval's ``HFLM.loglikelihood`` on (context, candidate) requests, which is
what its multiple-choice tasks run. lm-eval returns summed log-likelihoods, so selections are
compared under the same rule (highest summed log-prob); our mean-loss selection is reported too.

    .venv/bin/python bench/scoring.py [--questions 1000]                      # CPU, float32, vs lm-eval
    python bench/scoring.py --device cuda --dtype bfloat16 --preset 1b [--no-lm-eval]

GPU mode needs only torch, transformers and tokenizers (lm_eval is imported only when used); it
reports tokens/s and the fraction of the bf16 peak (--peak-tflops, default 798 = H100 measured).
"""

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from scoring_peer import LmEvalPeer, side_by_side  # noqa: E402  (bench/ is the script's folder)
from scoring_report import profile_ours, report_ours, sync  # noqa: E402

from evaluation.scoring.base import CandidateScore, ContextTemplate, select  # noqa: E402
from evaluation.scoring.lm import LMScorer  # noqa: E402
from evaluation.scoring.packed import packed_length  # noqa: E402

SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
PRESETS = {
    # GPT-2-shaped, the CPU comparison model
    "small": {"family": "gpt2", "n_layer": 6, "n_embd": 512, "n_head": 8},
    # Llama-shaped, >= 1B parameters with our tokenizer (TinyLlama-like widths, full multi-head attention)
    "1b": {
        "family": "llama",
        "hidden_size": 2048,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "intermediate_size": 5632,
    },
    # a tiny Llama, for a quick check of the script (and of the GPU mode's code path) on any machine
    "tiny-llama": {
        "family": "llama",
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 128,
    },
}


def dialogues(path: Path) -> list[list[str]]:
    return [[t.strip() for t in line.split("__eou__") if t.strip()] for line in path.open(encoding="utf-8")]


def cpu_products() -> str:
    """Which library does our float32 products on a CPU, and why (evaluation/scoring/cpu_linear.py)."""
    from evaluation.scoring import cpu_linear

    setting = f"WELLCHOSEN_CPU_ONEDNN={cpu_linear.onednn_setting()}"
    vendor = cpu_linear.cpu_vendor() or "unknown vendor"
    blas = "MKL" if torch.backends.mkl.is_available() else "no MKL"
    where = "oneDNN" if cpu_linear.onednn_linear_available() else "torch's default"
    return f"our products through {where} ({setting}; {blas}, {vendor}); lm-eval's through torch's default"


def build_questions(n: int, seed: int, false: int = 3) -> list[tuple[list[str], list[str], int]]:
    """(context turns, candidates, index of the ground truth) for n questions of 1 + ``false`` candidates."""
    source = []
    for part in ("test/dialogues_test.txt", "validation/dialogues_validation.txt"):
        source.extend(d for d in dialogues(SHARED / "dailydialog" / part) if len(d) >= 4)
    if len(source) < n:
        sys.exit(f"only {len(source)} DailyDialog dialogues with 4 turns; ask for --questions {len(source)} or fewer")
    rng = random.Random(seed)
    source = source[:n]
    questions = []
    for i, dialogue in enumerate(source):
        others = rng.sample([j for j in range(len(source)) if j != i], false) if n > false + 1 else []
        candidates = [dialogue[3], *(source[j][3] for j in others)]
        rng.shuffle(candidates)
        questions.append((dialogue[:3], candidates, candidates.index(dialogue[3])))
    return questions


def train_tokenizer(folder: Path, vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = [t for d in dialogues(SHARED / "dailydialog" / "train" / "dialogues_train.txt") for t in d]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = {"pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>"}
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, **special)
    fast.save_pretrained(folder)
    return fast, len(texts)


def build_model(preset: str, tokenizer, *, device: str, dtype: torch.dtype, seed: int):
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    shape = dict(PRESETS[preset])
    family = shape.pop("family")
    ids = {
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    torch.manual_seed(seed)
    if family == "gpt2":
        config = GPT2Config(vocab_size=len(tokenizer), n_positions=1024, **shape, **ids)
        model_class = GPT2LMHeadModel
    else:
        config = LlamaConfig(vocab_size=len(tokenizer), max_position_embeddings=2048, **shape, **ids)
        model_class = LlamaForCausalLM
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # initialise directly in the target dtype (1B params in fp32 is 4 GB)
    try:
        with torch.device(device):
            model = model_class(config)
    finally:
        torch.set_default_dtype(previous)
    return model.eval()


def run_ours(scorer: LMScorer, questions, device: str, repeat: int) -> tuple[list[list[CandidateScore]], float, dict]:
    contexts = [scorer.render(q[0]) for q in questions]
    encoded = scorer.encode(contexts, [q[1] for q in questions])
    # warm-up, as a worker's first batches: a batch of several questions and one of a single
    # question (a compiled body compiles both shapes once; an eager one just warms up)
    start = time.perf_counter()
    scorer.score_encoded(encoded[:16])
    scorer.score_encoded(encoded[:1])
    warm_up = time.perf_counter() - start
    if scorer.body is not None:
        failed = f" (compilation FAILED, eager mode: {scorer.body.failed})" if scorer.body.failed else ""
        print(f"ours: torch.compile'd body, compiled during the warm-up in {warm_up:.1f} s{failed}")
    times = []
    for _ in range(repeat):
        sync(device)
        start = time.perf_counter()
        scores = scorer.score_encoded(encoded)
        sync(device)
        times.append(time.perf_counter() - start)
    seconds = min(times)
    if repeat > 1:
        print(f"ours: {repeat} timed runs: " + ", ".join(f"{t:.3f} s" for t in times) + " (the fastest is reported)")
    context_tokens = sum(len(e.context) for e in encoded)
    candidate_tokens = sum(len(c) for e in encoded for c in e.candidates)
    naive_tokens = sum(len(e.context) * len(e.candidates) for e in encoded) + candidate_tokens
    # tokens through the body: the packed path feeds each context once and each candidate but
    # its last token; the kv-cache path feeds every candidate token
    if scorer.strategy == "packed":
        processed = sum(packed_length(e) for e in encoded)
    else:
        processed = context_tokens + candidate_tokens
    # the packed body's last MLP skips every context position but the last (body.py)
    skipped = sum(len(e.context) - 1 for e in encoded) if scorer.strategy == "packed" else 0
    counts = {
        "candidate_tokens": candidate_tokens,
        "naive_tokens": naive_tokens,
        "processed_tokens": processed,
        "mlp_skipped_tokens": skipped,
    }
    return scores, seconds, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--preset", default="small", choices=sorted(PRESETS))
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument(
        "--batch-tokens",
        default="0",
        help="our token budget per batch (0: by device); several, comma-separated, are timed in turn on one scorer",
    )
    parser.add_argument("--profile", action="store_true", help="profile one more run (GPU: kernels and busy share)")
    parser.add_argument("--lm-eval-batch-size", type=int, default=8, help="8 was lm-eval's fastest here (8-128 tried)")
    parser.add_argument("--no-lm-eval", action="store_true", help="skip the lm-eval side (e.g. on a GPU machine)")
    parser.add_argument("--check", type=int, default=0, help="also run our naive path on this many questions")
    parser.add_argument("--peak-tflops", type=float, default=798.0, help="bf16 peak of the GPU (H100 measured: 798)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: all cores)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--false", type=int, default=3, help="false candidates per question (3: a test set; 10: a retrieval pool)"
    )
    parser.add_argument("--strategy", default="packed", choices=["packed", "kv-cache"], help="our causal fast path")
    parser.add_argument("--rounds", type=int, default=5, help="alternating ours / lm-eval rounds")
    parser.add_argument(
        "--compile", action="store_true", help="our packed path with a torch.compile'd body (a system's compile_model)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="time our path this many times (the fastest counts)")
    args = parser.parse_args()
    if not (SHARED / "dailydialog").is_dir():
        sys.exit(f"DailyDialog not found under {SHARED} (set WELLCHOSEN_SHARED_DATA)")
    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[args.dtype]
    if args.device == "cpu" and dtype != torch.float32:
        sys.exit("on a CPU the scoring core runs in float32; use --dtype float32")

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from benchlib import load_average, machine_facts

    for line in machine_facts():
        print(line)
    print(
        f"torch {torch.__version__}, device {args.device}"
        + (
            f" ({torch.cuda.get_device_name()})"
            if args.device.startswith("cuda")
            else f", {torch.get_num_threads()} threads, {cpu_products()}"
        )
    )
    questions = build_questions(args.questions, args.seed, args.false)
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        tokenizer, n_texts = train_tokenizer(Path(folder), args.vocab)
        print(
            f"tokenizer: byte-level BPE, {len(tokenizer)} tokens, trained on {n_texts} DailyDialog train turns "
            f"in {time.perf_counter() - t0:.1f} s"
        )
    model = build_model(args.preset, tokenizer, device=args.device, dtype=dtype, seed=args.seed)
    n_params = sum(p.numel() for p in model.parameters())
    embedding = model.get_input_embeddings().weight.numel()
    print(f"model: {args.preset} ({type(model).__name__}), {n_params / 1e6:.1f} M parameters, {args.dtype}")
    print(
        f"questions: {len(questions)} x {len(questions[0][1])} candidates (DailyDialog test/validation, 3-turn context)"
    )

    budgets = [int(b) or (16384 if args.device.startswith("cuda") else 2048) for b in args.batch_tokens.split(",")]
    scorer = LMScorer(
        model=model,
        tokenizer=tokenizer,
        kind="causal",
        template=ContextTemplate("\n"),
        max_context_tokens=512,
        max_candidate_tokens=128,
        batch_tokens=budgets[0],
        strategy=args.strategy,
        compile_model=args.compile,
        max_questions_per_batch=1024 if args.device.startswith("cuda") else 256,
    )
    for budget in budgets:
        scorer.batch_tokens = budget
        scores, ours_s, counts = run_ours(scorer, questions, args.device, args.repeat)
        flops = report_ours(args, scorer, model, questions, ours_s, counts, budget)
    if args.profile:
        profile_ours(scorer, questions, args.device)
    n_cands = sum(len(q[1]) for q in questions)
    head = model.get_output_embeddings().weight
    body = n_params - embedding - (0 if head is model.get_input_embeddings().weight else head.numel())
    accuracy_loss = sum(select(s) == q[2] for s, q in zip(scores, questions, strict=True)) / len(questions)
    accuracy_sum = sum(select(s, rule="sum") == q[2] for s, q in zip(scores, questions, strict=True)) / len(questions)
    print(
        f"ours: accuracy {accuracy_loss:.3f} (lowest mean loss), {accuracy_sum:.3f} (highest summed log-prob); "
        f"a random-init model is near chance ({1 / (args.false + 1):.2f}): the bench measures speed and agreement, "
        "not quality"
    )

    if args.check:
        subset = questions[: args.check]
        encoded = scorer.encode([scorer.render(q[0]) for q in subset], [q[1] for q in subset])
        naive = scorer.score_encoded(encoded, naive=True)
        diff = max(abs(a.loss - b.loss) for x, y in zip(scores, naive, strict=False) for a, b in zip(x, y, strict=True))
        same = sum(select(x) == select(y) for x, y in zip(scores, naive, strict=False))
        print(
            f"check vs naive path on {len(subset)} questions: max |loss difference| {diff:.2e}, "
            f"same selection {same}/{len(subset)}"
        )

    if args.no_lm_eval:
        print("\nlm-eval: skipped (--no-lm-eval)")
        return
    try:
        import lm_eval  # noqa: F401
    except ImportError:
        print("\nlm-eval: not installed (pip install -e '.[bench]'); skipped")
        return
    peer = LmEvalPeer(model, tokenizer, scorer, args.lm_eval_batch_size)
    lls, t = side_by_side(scorer, peer, questions, args.rounds)
    print(
        f"\nside by side, {args.rounds} alternating rounds over interleaved slices of the {len(questions)} questions:\n"
        f"  ours:    {t['ours_wall']:.1f} s wall, {t['ours_cpu']:.1f} s CPU, "
        f"{n_cands / t['ours_wall']:.1f} candidates/s\n"
        f"  lm-eval: {t['peer_wall']:.1f} s wall, {t['peer_cpu']:.1f} s CPU, "
        f"{n_cands / t['peer_wall']:.1f} candidates/s "
        f"(HFLM.loglikelihood, batch size {args.lm_eval_batch_size})"
    )
    peer_choice = [max(range(len(ll)), key=lambda k: (ll[k], -k)) for ll in lls]
    same_sum = sum(select(s, rule="sum") == c for s, c in zip(scores, peer_choice, strict=True))
    same_loss = sum(select(s) == c for s, c in zip(scores, peer_choice, strict=True))
    # lm-eval moves the context's trailing "\n" into the continuation, so its log-likelihood is
    # ours plus log p("\n" | context): the same offset for every candidate of a question.
    spread = max(
        max(ll[k] - s[k].sum_logprob for k in range(len(ll))) - min(ll[k] - s[k].sum_logprob for k in range(len(ll)))
        for ll, s in zip(lls, scores, strict=True)
    )
    peer_accuracy = sum(c == q[2] for c, q in zip(peer_choice, questions, strict=True)) / len(questions)
    print(
        f"selections, same rule (highest summed log-prob): identical for {same_sum}/{len(questions)} questions; "
        f"lm-eval accuracy {peer_accuracy:.3f} vs ours {accuracy_sum:.3f}"
    )
    print(f"selections, our mean-loss rule vs lm-eval's summed rule: same for {same_loss}/{len(questions)}")
    print(
        f"log-likelihoods: lm-eval - ours is constant within each question up to {spread:.2e} nats "
        "(the offset is log p(newline | context), which lm-eval counts in the continuation)"
    )
    print(
        f"\nthroughput ratio (ours / lm-eval): {t['peer_wall'] / t['ours_wall']:.2f}x wall-clock, "
        f"{t['peer_cpu'] / t['ours_cpu']:.2f}x CPU time"
    )
    # The ratio splits into fewer FLOPs and faster FLOPs. lm-eval feeds every (context,
    # candidate) request but its last token and applies the head at every position (its padding
    # is not counted, so its FLOPs are a lower bound).
    peer_flops = 2 * (body + head.numel()) * (counts["naive_tokens"] - n_cands)
    fewer = peer_flops / flops
    print(
        f"forward FLOPs: ours {flops / 1e12:.2f} T, lm-eval at least {peer_flops / 1e12:.2f} T: {fewer:.2f}x fewer; "
        f"side by side, ours ran {flops / t['ours_wall'] / 1e9:.0f} GFLOP/s and lm-eval at least "
        f"{peer_flops / t['peer_wall'] / 1e9:.0f} GFLOP/s: each of our FLOPs "
        f"{t['peer_wall'] / t['ours_wall'] / fewer:.2f}x as fast"
    )
    print(f"load average at the end: {load_average()} (1/5/15 min)")


if __name__ == "__main__":
    main()
