"""Candidate losses from a Hugging Face causal LM or encoder-decoder model.

Two paths compute the same numbers:

- the **fast path** (``score``): a causal LM encodes each context once and shares it across all
  candidates of the question, either packed (default: one row per question, ``context +
  candidates`` with a 4-D attention mask and restarted position ids; see packed.py) or through
  its KV cache (``strategy="kv-cache"``: contexts right-padded and encoded in a batch, the cache
  expanded to the candidate batch, candidates chunked by length); the output head runs only at
  candidate positions. An encoder-decoder runs its encoder once per context and its decoder over
  the candidates with the encoder output expanded. With ``compile_model`` the packed path runs a
  torch.compile'd copy of the body (compiled.py).
- the **naive path** (``score(naive=True)``): one full forward pass per (context, candidate),
  the reference the fast paths are tested against.

Contexts are rendered by the system's template: the plain one (base.py) or the tokenizer's chat
template (chat.py); either way the candidate's own tokens are scored after it.

Every attention row sees at least one real token (no NaN from fully masked rows); candidates get
position ids that continue their own context. Log-softmax is always taken in float32.
"""

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .allocator import keep_freed_memory
from .base import CandidateScore, ContextTemplate
from .body import PackedBody, packed_body
from .chat import ChatTemplate
from .packed import packed_batches, packed_launch, packed_results, target_logprobs

# causal fast paths: "packed" (one row per question, 4-D mask; see packed.py) or "kv-cache"
# (the context's KV cache expanded to the candidate batch)
STRATEGIES = ("packed", "kv-cache")


@dataclass(frozen=True)
class Encoded:
    context: list[int]
    candidates: list[list[int]]


class LMScorer:
    # each question's context is encoded once for all of its candidates: callers may put more
    # candidates per question in one call to share it further (RANDOM trials do)
    shares_context = True

    def __init__(
        self,
        *,
        model,
        tokenizer,
        kind: str,
        template: ContextTemplate | ChatTemplate = ContextTemplate(),
        max_context_tokens: int = 512,
        max_candidate_tokens: int = 128,
        eos_after_candidate: bool = False,
        batch_tokens: int = 8192,
        max_questions_per_batch: int = 256,
        context_budget: int | None = None,
        strategy: str = "packed",
        compile_model: bool = False,
    ) -> None:
        if kind not in ("causal", "seq2seq"):
            raise ValueError(f"LMScorer scores causal or seq2seq models, not {kind!r}")
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
        self.strategy = strategy
        self.model = model.eval()
        # what the packed causal path runs: the compiled body (compiled.py), or the eager packed
        # body (shared weights, the fastest eager GELU, the last layer's MLP only where an output
        # is read; body.py)
        self.packed_body = None
        if kind == "causal" and strategy == "packed":
            if compile_model:
                from .compiled import CompiledBody

                name = getattr(model.config, "_name_or_path", "") or ""
                self.packed_body = CompiledBody(model.base_model, name=name)
            else:
                self.packed_body = packed_body(model.base_model, compiled=False)
        self.tokenizer = tokenizer
        self.kind = kind
        self.template = template
        self.eos_after_candidate = eos_after_candidate
        self.batch_tokens = batch_tokens
        self.max_questions_per_batch = max_questions_per_batch
        # contexts of a batch are encoded together and their KV cache is kept while its candidates run
        self.context_budget = context_budget or batch_tokens
        self.device = next(model.parameters()).device
        if self.device.type == "cpu":
            keep_freed_memory()  # no page faults on each batch's buffers (allocator.py)
        self.eos_id = tokenizer.eos_token_id
        # what ends a turn after a candidate: the chat template's end-of-turn token, or the EOS
        self.end_id = template.end_of_turn_id if isinstance(template, ChatTemplate) else self.eos_id
        if self.end_id is None and eos_after_candidate:
            raise ValueError("eos_after_candidate needs a tokenizer with an end-of-sequence token")
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (self.eos_id or 0)
        self.max_candidate_tokens = max_candidate_tokens
        limit = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", None)
        self._specials = _special_tokens_around(tokenizer) if kind == "seq2seq" else ([], [])
        # The fast causal path applies the output head itself: models that scale or cap their
        # logits after it (Gemma 2, Cohere, Granite) are scored by the naive path instead.
        config = model.config
        self._plain_head = kind == "seq2seq" or not any(
            getattr(config, name, None) not in (None, 1, 1.0)
            for name in ("final_logit_softcapping", "logit_scale", "logits_scaling")
        )
        if limit and kind == "causal":
            # context + candidate must fit the position embeddings: a candidate keeps at most all
            # but one of them (a context of one token), the context what the candidate leaves
            self.max_candidate_tokens = min(max_candidate_tokens, limit - 1)
            max_context_tokens = max(1, min(max_context_tokens, limit - self.max_candidate_tokens))
        elif limit:
            # the encoder reads the framed context, the decoder the candidate
            max_context_tokens = max(1, min(max_context_tokens, limit - sum(map(len, self._specials))))
            self.max_candidate_tokens = min(max_candidate_tokens, limit)
        self.max_context_tokens = max_context_tokens
        # transformers 5 renamed the forward argument past_key_values to cache
        parameters = inspect.signature(model.base_model.forward).parameters
        self._cache_kwarg = "cache" if "cache" in parameters else "past_key_values"

    @property
    def body(self):
        """The torch.compile'd body of the packed causal path (compiled.py); None when it runs eagerly."""
        return None if self.packed_body is None or isinstance(self.packed_body, PackedBody) else self.packed_body

    # -- text -> token ids -------------------------------------------------------------------

    def render(self, turns: Sequence[str]) -> str:
        if isinstance(self.template, ChatTemplate):  # drops the oldest turns of a long context
            return self.template.fitted(turns, max_tokens=self.max_context_tokens)
        return self.template.render(turns, eos=self.tokenizer.eos_token or "")

    def encode(self, context_texts: Sequence[str], candidates: Sequence[Sequence[str]]) -> list[Encoded]:
        tok = self.tokenizer
        contexts = tok(list(context_texts), add_special_tokens=False)["input_ids"]
        flat = [c for cands in candidates for c in cands]
        cand_ids = tok(flat, add_special_tokens=False)["input_ids"] if flat else []
        encoded, i = [], 0
        for ctx, cands in zip(contexts, candidates, strict=True):
            ctx = ctx[-self.max_context_tokens :]  # keep the end of a long context
            if self.kind == "seq2seq":
                ctx = [*self._specials[0], *ctx, *self._specials[1]]
            if not ctx:  # an empty context: condition on a start token
                ctx = [tok.bos_token_id if tok.bos_token_id is not None else self.eos_id or self.pad_id]
            encoded.append(Encoded(ctx, [self._candidate(ids) for ids in cand_ids[i : i + len(cands)]]))
            i += len(cands)
        return encoded

    def _candidate(self, ids: list[int]) -> list[int]:
        room = self.max_candidate_tokens - (1 if self.eos_after_candidate else 0)
        ids = ids[: max(room, 0)]
        if self.eos_after_candidate or not ids:  # an empty candidate is scored as "end of turn"
            ids = [*ids, self.end_id if self.end_id is not None else self.pad_id]
        return ids

    # -- scoring -----------------------------------------------------------------------------

    def score(
        self, contexts: Sequence[Sequence[str]], candidates: Sequence[Sequence[str]], *, naive: bool = False
    ) -> list[list[CandidateScore]]:
        """``contexts``: per question, its turns; ``candidates``: per question, its candidate texts."""
        return self.score_texts([self.render(t) for t in contexts], candidates, naive=naive)

    def score_texts(
        self, context_texts: Sequence[str], candidates: Sequence[Sequence[str]], *, naive: bool = False
    ) -> list[list[CandidateScore]]:
        return self.score_encoded(self.encode(context_texts, candidates), naive=naive)

    @torch.inference_mode()
    def score_encoded(self, questions: Sequence[Encoded], *, naive: bool = False) -> list[list[CandidateScore]]:
        if naive or not self._plain_head:
            one = self._naive_causal if self.kind == "causal" else self._naive_seq2seq
            return [[one(q.context, c) for c in q.candidates] for q in questions]
        results: list[list[CandidateScore] | None] = [None] * len(questions)
        if self.kind == "causal" and self.strategy == "packed":
            # Every batch is queued before any result is read, so the host prepares batch i + 1
            # while the device runs batch i (reading a result waits for the device).
            launched = []
            for batch in packed_batches(questions, batch_tokens=self.batch_tokens):
                chosen = [questions[i] for i in batch]
                launched.append(
                    (batch, chosen, packed_launch(self.model, chosen, pad_id=self.pad_id, body=self.packed_body))
                )
            for batch, chosen, sums in launched:
                for index, question in zip(batch, packed_results(chosen, sums), strict=True):
                    results[index] = [_score(total, n) for total, n in question]
            return results  # type: ignore[return-value]
        for batch in self._batches(questions):
            run = self._fast_causal if self.kind == "causal" else self._fast_seq2seq
            for index, scores in zip(batch, run([questions[i] for i in batch]), strict=True):
                results[index] = scores
        return results  # type: ignore[return-value]

    def _batches(self, questions: Sequence[Encoded]) -> list[list[int]]:
        """Questions sorted by context length (longest first), cut so that the padded contexts of a
        batch stay under ``context_budget`` tokens; candidates are chunked separately (``_chunks``)."""
        order = sorted(range(len(questions)), key=lambda i: len(questions[i].context), reverse=True)
        batches: list[list[int]] = []
        for i in order:
            current = batches[-1] if batches else None
            # longest first: the batch's padded width is the length of its first context
            width = len(questions[current[0]].context) if current else 0
            if (
                current is None
                or (len(current) + 1) * width > self.context_budget
                or len(current) >= self.max_questions_per_batch
                or width - len(questions[i].context) > max(8, width // 4)  # too much padding
            ):
                batches.append([i])
            else:
                current.append(i)
        return batches

    def _chunks(self, lengths: Sequence[int], *, context_width: int = 0) -> list[list[int]]:
        """Candidates sorted by length (longest first), cut so that a chunk's expanded cache and
        candidate tokens (``rows x (context_width + width)``) stay under the token budget, and
        wherever padding would exceed a fifth of a chunk's width (a few tokens for short ones)."""
        order = sorted(range(len(lengths)), key=lambda n: lengths[n], reverse=True)
        chunks: list[list[int]] = []
        for n in order:
            if chunks:
                width = lengths[chunks[-1][0]]
                fits = (len(chunks[-1]) + 1) * (context_width + width) <= self.batch_tokens
                if fits and width - lengths[n] <= max(4, width // 5):
                    chunks[-1].append(n)
                    continue
            chunks.append([n])
        return chunks

    def _pad(self, rows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[r, : len(row)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _fast_causal(self, questions: Sequence[Encoded]) -> list[list[CandidateScore]]:
        base = self.model.base_model
        head = self.model.get_output_embeddings()
        ctx_ids, ctx_mask = self._pad([q.context for q in questions])
        ctx_len = ctx_mask.sum(dim=1)
        positions = torch.arange(ctx_ids.shape[1], device=self.device).expand_as(ctx_ids)
        out = base(input_ids=ctx_ids, attention_mask=ctx_mask, position_ids=positions, use_cache=True)
        last = out.last_hidden_state[torch.arange(len(questions), device=self.device), ctx_len - 1]
        layers = _cache_tensors(_output_cache(out))

        flat = [(b, c) for b, q in enumerate(questions) for c in q.candidates]
        sums, lengths = [0.0] * len(flat), [len(c) for _, c in flat]
        for chunk in self._chunks(lengths, context_width=ctx_ids.shape[1]):
            owner = torch.tensor([flat[n][0] for n in chunk], device=self.device)
            # contexts are right-padded: the owners' tokens all lie in the first `width` cache slots
            width = max(len(questions[flat[n][0]].context) for n in chunk)
            cand_ids, cand_mask = self._pad([flat[n][1] for n in chunk])
            cand_positions = ctx_len[owner][:, None] + torch.arange(cand_ids.shape[1], device=self.device)[None, :]
            hidden = base(
                input_ids=cand_ids,
                attention_mask=torch.cat([ctx_mask[owner, :width], cand_mask], dim=1),
                position_ids=cand_positions,
                use_cache=True,
                **{self._cache_kwarg: _expanded_cache(layers, owner, width)},
            ).last_hidden_state
            # token j of a candidate is predicted from the state before it: the context's last
            # state for j = 0, the candidate's own state j - 1 after that
            predictors = torch.cat([last[owner][:, None, :], hidden[:, :-1, :]], dim=1)
            keep = cand_mask.bool()
            token_logprobs = target_logprobs(head, predictors[keep], cand_ids[keep])
            for n, total in zip(chunk, _row_sums(token_logprobs, keep), strict=True):
                sums[n] = total
        return self._collect(questions, sums, lengths)

    def _fast_seq2seq(self, questions: Sequence[Encoded]) -> list[list[CandidateScore]]:
        ctx_ids, ctx_mask = self._pad([q.context for q in questions])
        encoder_hidden = self.model.get_encoder()(input_ids=ctx_ids, attention_mask=ctx_mask).last_hidden_state
        flat = [(b, c) for b, q in enumerate(questions) for c in q.candidates]
        sums, lengths = [0.0] * len(flat), [len(c) for _, c in flat]
        for chunk in self._chunks(lengths, context_width=ctx_ids.shape[1]):
            owner = torch.tensor([flat[n][0] for n in chunk], device=self.device)
            labels, label_mask = self._pad([flat[n][1] for n in chunk])
            decoder_ids, _ = self._pad([[self._decoder_start(), *flat[n][1][:-1]] for n in chunk])
            logits = self.model(
                encoder_outputs=(encoder_hidden[owner],),
                attention_mask=ctx_mask[owner],
                decoder_input_ids=decoder_ids,
                decoder_attention_mask=label_mask,
                use_cache=False,
            ).logits
            keep = label_mask.bool()
            selected = torch.log_softmax(logits[keep].float(), dim=-1)
            token_logprobs = selected.gather(1, labels[keep][:, None])[:, 0]
            for n, total in zip(chunk, _row_sums(token_logprobs, keep), strict=True):
                sums[n] = total
        return self._collect(questions, sums, lengths)

    def _collect(self, questions, sums: list[float], lengths: list[int]) -> list[list[CandidateScore]]:
        results, n = [], 0
        for q in questions:
            results.append([_score(sums[n + k], lengths[n + k]) for k in range(len(q.candidates))])
            n += len(q.candidates)
        return results

    def _decoder_start(self) -> int:
        start = getattr(self.model.config, "decoder_start_token_id", None)
        if start is None:
            start = self.pad_id
        return start

    def _naive_causal(self, context: list[int], candidate: list[int]) -> CandidateScore:
        ids = torch.tensor([context + candidate], device=self.device)
        logits = self.model(input_ids=ids).logits[0].float()
        start = len(context) - 1
        logprobs = torch.log_softmax(logits[start : start + len(candidate)], dim=-1)
        picked = logprobs.gather(1, torch.tensor(candidate, device=self.device)[:, None])[:, 0]
        return _score(float(picked.double().sum()), len(candidate))

    def _naive_seq2seq(self, context: list[int], candidate: list[int]) -> CandidateScore:
        logits = self.model(
            input_ids=torch.tensor([context], device=self.device),
            decoder_input_ids=torch.tensor([[self._decoder_start(), *candidate[:-1]]], device=self.device),
        ).logits[0]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        picked = logprobs.gather(1, torch.tensor(candidate, device=self.device)[:, None])[:, 0]
        return _score(float(picked.double().sum()), len(candidate))


def _score(sum_logprob: float, n_tokens: int) -> CandidateScore:
    return CandidateScore(loss=-sum_logprob / n_tokens, sum_logprob=sum_logprob, n_tokens=n_tokens)


def _row_sums(token_logprobs: torch.Tensor, keep: torch.Tensor) -> list[float]:
    """Per row of ``keep`` (a padded batch), the sum of its kept tokens' log-probabilities (float64)."""
    rows = torch.arange(keep.shape[0], device=keep.device)[:, None].expand_as(keep)[keep]
    sums = torch.zeros(keep.shape[0], dtype=torch.float64, device=keep.device)
    sums.index_add_(0, rows, token_logprobs.double())
    return sums.tolist()


def _output_cache(out):
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def _special_tokens_around(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a text (BART: <s> ... </s>; T5: ... </s>),
    so that a context can be truncated first and framed after."""
    plain = tokenizer("x", add_special_tokens=False)["input_ids"]
    framed = tokenizer("x", add_special_tokens=True)["input_ids"]
    for start in range(len(framed) - len(plain) + 1):
        if framed[start : start + len(plain)] == plain:
            return framed[:start], framed[start + len(plain) :]
    return [], []


def _cache_tensors(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(keys, values) per layer, batch first, from a transformers cache (4.x or 5.x) or legacy tuples."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    if hasattr(cache, "to_legacy_cache"):
        cache = cache.to_legacy_cache()
    return [(k, v) for k, v, *_ in cache]


def _expanded_cache(layers, owner: torch.Tensor, width: int):
    """The contexts' KV cache with one row per candidate (rows of a question share its context)."""
    from transformers import DynamicCache

    cache = DynamicCache()
    for index, (keys, values) in enumerate(layers):
        cache.update(keys[:, :, :width].index_select(0, owner), values[:, :, :width].index_select(0, owner), index)
    return cache
