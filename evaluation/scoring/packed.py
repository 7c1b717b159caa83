"""The packed fast path for causal LMs: one row per question, ``context + candidate 1 + candidate 2 + ...``.

A 4-D attention mask lets every candidate token see the context and the earlier tokens of its own
candidate only, and position ids restart after the context for each candidate, so each candidate
is scored exactly as if it followed the context alone. The context is encoded once and shared
by all of the question's candidates without copying a KV cache, and only the real tokens of a
row are computed (rows are sorted by packed length, so padding stays small). A candidate's last
token predicts nothing, so it is not fed. The output head and a float32 log-softmax run only
where a candidate token is predicted, and so does the last layer's MLP (body.py).
"""

from collections.abc import Sequence

import torch

from .body import PackedBody
from .cpu_linear import linear

_CONTEXT, _PAD = -1, -2


def packed_batches(questions: Sequence, *, batch_tokens: int) -> list[list[int]]:
    """Question indices sorted by packed length (longest first), cut at ``rows x width <= batch_tokens``."""
    lengths = [packed_length(q) for q in questions]
    order = sorted(range(len(questions)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    for i in order:
        if batches and (len(batches[-1]) + 1) * lengths[batches[-1][0]] <= batch_tokens:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def packed_length(question) -> int:
    """Tokens in a question's row: the context, then each candidate but its last token."""
    return len(question.context) + sum(len(c) - 1 for c in question.candidates)


def packed_results(questions: Sequence, sums: torch.Tensor) -> list[list[tuple[float, int]]]:
    """The per-candidate sums of ``packed_launch`` as (summed log-probability, tokens) per question
    (reading them waits for the device)."""
    values = sums.tolist()
    results, n = [], 0
    for q in questions:
        results.append([(values[n + k], len(c)) for k, c in enumerate(q.candidates)])
        n += len(q.candidates)
    return results


def packed_launch(model, questions: Sequence, *, pad_id: int, body=None) -> torch.Tensor:
    """Start scoring a batch: the summed log-probability of every candidate, in order, as a device
    tensor. Nothing here waits for the device (inputs go through pinned memory), so the host
    prepares the next batch while this one runs; ``packed_results`` reads the sums.

    ``body`` runs the transformer without its head: a ``PackedBody`` or a ``CompiledBody``, which
    take ``keep`` (default: ``model.base_model`` run in full)."""
    body = body if body is not None else PackedBody(model.base_model)
    device = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    width = max(packed_length(q) for q in questions)
    ids = torch.full((len(questions), width), pad_id, dtype=torch.long)
    positions = torch.zeros((len(questions), width), dtype=torch.long)
    segments = torch.full((len(questions), width), _PAD, dtype=torch.long)
    rows, predictors, targets, owners = [], [], [], []
    n = 0
    for r, q in enumerate(questions):
        c = len(q.context)
        ids[r, :c] = torch.tensor(q.context)
        positions[r, :c] = torch.arange(c)
        segments[r, :c] = _CONTEXT
        offset = c
        for k, candidate in enumerate(q.candidates):
            m = len(candidate)  # fed: its first m - 1 tokens
            ids[r, offset : offset + m - 1] = torch.tensor(candidate[:-1])
            positions[r, offset : offset + m - 1] = torch.arange(c, c + m - 1)
            segments[r, offset : offset + m - 1] = k
            # token j is predicted at the context's last token (j = 0) or at token j - 1
            rows.extend([r] * m)
            predictors.extend([c - 1, *range(offset, offset + m - 1)])
            targets.extend(candidate)
            owners.extend([n] * m)
            offset += m - 1
            n += 1
    seg_q, seg_k = segments[:, :, None], segments[:, None, :]
    causal = torch.ones((width, width), dtype=torch.bool).tril()
    allowed = causal & ((seg_k == _CONTEXT) | (seg_k == seg_q))  # padding rows see the context: never empty
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)[:, None]
    rows_t, predictors_t = torch.tensor(rows), torch.tensor(predictors)
    # the positions whose last hidden state is read (each question's first candidate tokens all
    # read the context's last one): the last layer's MLP runs there only (body.py)
    keep = torch.unique(rows_t * width + predictors_t)
    hidden = body(
        input_ids=_to(ids, device),
        attention_mask=_to(mask, device),
        position_ids=_to(positions, device),
        use_cache=False,
        keep=_to(keep, device),
    ).last_hidden_state
    selected = hidden[_to(rows_t, device), _to(predictors_t, device)]
    logprobs = target_logprobs(model.get_output_embeddings(), selected, _to(torch.tensor(targets), device))
    sums = torch.zeros(n, dtype=torch.float64, device=device)
    sums.index_add_(0, _to(torch.tensor(owners), device), logprobs.double())
    return sums


def _to(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A host tensor on ``device``. To a GPU through pinned memory: a copy from pageable memory
    makes the host wait until the device has finished all the work queued before it."""
    if device.type != "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def target_logprobs(head, hidden: torch.Tensor, targets: torch.Tensor, *, chunk: int | None = None) -> torch.Tensor:
    """log p(target) for each row, with the output head and log-softmax applied in chunks of rows."""
    chunk = chunk or head_chunk_rows(hidden.device, head.weight.shape[0])
    parts = []
    for start in range(0, hidden.shape[0], chunk):
        logits = head_logits(head, hidden[start : start + chunk]).float()
        logprobs = torch.log_softmax(logits, dim=-1)
        parts.append(logprobs.gather(1, targets[start : start + chunk, None])[:, 0])
    return torch.cat(parts) if parts else hidden.new_zeros(0, dtype=torch.float32)


def head_logits(head: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """The output head's logits; a plain linear head's product through oneDNN on a CPU (cpu_linear.py)."""
    if type(head) is torch.nn.Linear:
        return linear(hidden, head.weight, head.bias)
    return head(hidden)


def head_chunk_rows(device: torch.device, vocab_size: int) -> int:
    """Rows of hidden states per output-head call.

    A GPU wants large calls. On a CPU the chunk's logits are written by the product and read back
    by the log-softmax, so they should stay in cache (about 2 M floats), but each call also reads
    the whole head, so a chunk keeps at least 128 rows. Measured on a 2-core EPYC, against 4,096
    rows: 1.45x faster for 8,192 x 512 (256 rows), 1.25x for 32,000 x 768 and 1.23x for 50,257 x 768
    (128 rows; 64 or 42 rows were slower there)."""
    if device.type != "cpu":
        return 4096
    return max(128, 2**21 // max(vocab_size, 1))
