"""The two kinds of Hugging Face language model a system can be: a causal LM and an encoder-decoder.

Everything that differs between them lives here, in one class each (:data:`LM_KINDS`, by a
System's ``kind``): which auto class loads the checkpoint, how a context is framed and truncated,
how the fast and the naive scoring paths compute a candidate's log-probability, and how a batch
of prompts is laid out for ``generate``. ``LMScorer`` (lm.py) and ``LMGenerator`` (lm_generate.py)
hold what the two share and ask their kind for the rest.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence

import torch

from .base import CandidateScore
from .body import packed_body
from .packed import packed_batches, packed_launch, packed_results, target_logprobs


class LMKind(ABC):
    name: str
    auto_class: str  # the transformers class that loads a checkpoint of this kind

    def model_class(self):
        import transformers

        return getattr(transformers, self.auto_class)

    def framing(self, tokenizer) -> tuple[list[int], list[int]]:
        """The special tokens put around a context after it is truncated (none by default)."""
        return [], []

    def plain_output_head(self, config) -> bool:
        """Whether the fast path may apply the output head itself (no scaling or capping after it)."""
        return True

    def packed_body(self, model, *, strategy: str, compile_model: bool):
        """What the packed path runs, or None where the kind has no packed path."""
        return None

    @abstractmethod
    def token_limits(
        self, *, limit: int, max_context_tokens: int, max_candidate_tokens: int, framing_tokens: int
    ) -> tuple[int, int]:
        """(context, candidate) token limits within the model's ``limit`` positions."""

    @abstractmethod
    def prompt_room(self, *, limit: int, max_new_tokens: int, framing_tokens: int) -> int:
        """Tokens a prompt may keep so that generating ``max_new_tokens`` fits ``limit`` positions."""

    @abstractmethod
    def score_fast(self, scorer, questions: Sequence) -> list[list[CandidateScore]]:
        """Every candidate of ``questions`` (``Encoded``), each context encoded once."""

    @abstractmethod
    def score_naive(self, scorer, context: list[int], candidate: list[int]) -> CandidateScore:
        """One candidate by one full forward pass: the reference of the fast path."""

    @abstractmethod
    def prompt_span(self, width: int, length: int) -> slice:
        """Where a prompt of ``length`` tokens sits in a padded row of ``width``."""

    @abstractmethod
    def new_tokens(self, output: torch.Tensor, width: int) -> torch.Tensor:
        """The generated tokens of ``generate``'s output for prompts padded to ``width``."""


class CausalLM(LMKind):
    name = "causal"
    auto_class = "AutoModelForCausalLM"

    def plain_output_head(self, config) -> bool:
        # Gemma 2, Cohere and Granite scale or cap their logits after the head: the naive path scores them
        return not any(
            getattr(config, name, None) not in (None, 1, 1.0)
            for name in ("final_logit_softcapping", "logit_scale", "logits_scaling")
        )

    def packed_body(self, model, *, strategy: str, compile_model: bool):
        if strategy != "packed":
            return None
        if compile_model:
            from .compiled import CompiledBody

            name = getattr(model.config, "_name_or_path", "") or ""
            return CompiledBody(model.base_model, name=name)
        return packed_body(model.base_model, compiled=False)

    def token_limits(
        self, *, limit: int, max_context_tokens: int, max_candidate_tokens: int, framing_tokens: int
    ) -> tuple[int, int]:
        # context + candidate must fit the position embeddings: a candidate keeps at most all but one
        # of them (a context of one token), the context what the candidate leaves
        candidate = min(max_candidate_tokens, limit - 1)
        return max(1, min(max_context_tokens, limit - candidate)), candidate

    def prompt_room(self, *, limit: int, max_new_tokens: int, framing_tokens: int) -> int:
        if max_new_tokens >= limit:
            raise ValueError(f"{max_new_tokens} new tokens do not fit the model's {limit} positions")
        return limit - max_new_tokens  # context + response within the positions

    def score_fast(self, scorer, questions: Sequence) -> list[list[CandidateScore]]:
        if scorer.packed_body is not None:
            return self._packed(scorer, questions)
        results: list[list[CandidateScore] | None] = [None] * len(questions)
        for batch in scorer.batches(questions):
            for index, scores in zip(batch, self._kv_cache(scorer, [questions[i] for i in batch]), strict=True):
                results[index] = scores
        return results  # type: ignore[return-value]

    def _packed(self, scorer, questions: Sequence) -> list[list[CandidateScore]]:
        # Every batch is queued before any result is read, so the host prepares batch i + 1 while the
        # device runs batch i (reading a result waits for the device).
        launched = []
        for batch in packed_batches(questions, batch_tokens=scorer.batch_tokens):
            chosen = [questions[i] for i in batch]
            sums = packed_launch(scorer.model, chosen, pad_id=scorer.pad_id, body=scorer.packed_body)
            launched.append((batch, chosen, sums))
        results: list[list[CandidateScore] | None] = [None] * len(questions)
        for batch, chosen, sums in launched:
            for index, question in zip(batch, packed_results(chosen, sums), strict=True):
                results[index] = [candidate_score(total, n) for total, n in question]
        return results  # type: ignore[return-value]

    def _kv_cache(self, scorer, questions: Sequence) -> list[list[CandidateScore]]:
        device = scorer.device
        base = scorer.model.base_model
        head = scorer.model.get_output_embeddings()
        ctx_ids, ctx_mask = scorer.pad([q.context for q in questions])
        ctx_len = ctx_mask.sum(dim=1)
        positions = torch.arange(ctx_ids.shape[1], device=device).expand_as(ctx_ids)
        out = base(input_ids=ctx_ids, attention_mask=ctx_mask, position_ids=positions, use_cache=True)
        last = out.last_hidden_state[torch.arange(len(questions), device=device), ctx_len - 1]
        layers = _cache_tensors(_output_cache(out))

        flat = [(b, c) for b, q in enumerate(questions) for c in q.candidates]
        sums, lengths = [0.0] * len(flat), [len(c) for _, c in flat]
        for chunk in scorer.chunks(lengths, context_width=ctx_ids.shape[1]):
            owner = torch.tensor([flat[n][0] for n in chunk], device=device)
            # contexts are right-padded: the owners' tokens all lie in the first `width` cache slots
            width = max(len(questions[flat[n][0]].context) for n in chunk)
            cand_ids, cand_mask = scorer.pad([flat[n][1] for n in chunk])
            cand_positions = ctx_len[owner][:, None] + torch.arange(cand_ids.shape[1], device=device)[None, :]
            hidden = base(
                input_ids=cand_ids,
                attention_mask=torch.cat([ctx_mask[owner, :width], cand_mask], dim=1),
                position_ids=cand_positions,
                use_cache=True,
                **{scorer.cache_kwarg: _expanded_cache(layers, owner, width)},
            ).last_hidden_state
            # token j of a candidate is predicted from the state before it: the context's last
            # state for j = 0, the candidate's own state j - 1 after that
            predictors = torch.cat([last[owner][:, None, :], hidden[:, :-1, :]], dim=1)
            keep = cand_mask.bool()
            token_logprobs = target_logprobs(head, predictors[keep], cand_ids[keep])
            for n, total in zip(chunk, row_sums(token_logprobs, keep), strict=True):
                sums[n] = total
        return collect(questions, sums, lengths)

    def score_naive(self, scorer, context: list[int], candidate: list[int]) -> CandidateScore:
        ids = torch.tensor([context + candidate], device=scorer.device)
        logits = scorer.model(input_ids=ids).logits[0].float()
        start = len(context) - 1
        logprobs = torch.log_softmax(logits[start : start + len(candidate)], dim=-1)
        picked = logprobs.gather(1, torch.tensor(candidate, device=scorer.device)[:, None])[:, 0]
        return candidate_score(float(picked.double().sum()), len(candidate))

    def prompt_span(self, width: int, length: int) -> slice:
        return slice(width - length, width)  # a causal model continues the last token: pad on the left

    def new_tokens(self, output: torch.Tensor, width: int) -> torch.Tensor:
        return output[:, width:]  # after the padded prompt


class Seq2SeqLM(LMKind):
    name = "seq2seq"
    auto_class = "AutoModelForSeq2SeqLM"

    def framing(self, tokenizer) -> tuple[list[int], list[int]]:
        return special_tokens_around(tokenizer)

    def token_limits(
        self, *, limit: int, max_context_tokens: int, max_candidate_tokens: int, framing_tokens: int
    ) -> tuple[int, int]:
        # the encoder reads the framed context, the decoder the candidate
        return max(1, min(max_context_tokens, limit - framing_tokens)), min(max_candidate_tokens, limit)

    def prompt_room(self, *, limit: int, max_new_tokens: int, framing_tokens: int) -> int:
        return limit - framing_tokens

    def score_fast(self, scorer, questions: Sequence) -> list[list[CandidateScore]]:
        results: list[list[CandidateScore] | None] = [None] * len(questions)
        for batch in scorer.batches(questions):
            for index, scores in zip(batch, self._batch(scorer, [questions[i] for i in batch]), strict=True):
                results[index] = scores
        return results  # type: ignore[return-value]

    def _batch(self, scorer, questions: Sequence) -> list[list[CandidateScore]]:
        ctx_ids, ctx_mask = scorer.pad([q.context for q in questions])
        encoder_hidden = scorer.model.get_encoder()(input_ids=ctx_ids, attention_mask=ctx_mask).last_hidden_state
        flat = [(b, c) for b, q in enumerate(questions) for c in q.candidates]
        sums, lengths = [0.0] * len(flat), [len(c) for _, c in flat]
        start = self._decoder_start(scorer)
        for chunk in scorer.chunks(lengths, context_width=ctx_ids.shape[1]):
            owner = torch.tensor([flat[n][0] for n in chunk], device=scorer.device)
            labels, label_mask = scorer.pad([flat[n][1] for n in chunk])
            decoder_ids, _ = scorer.pad([[start, *flat[n][1][:-1]] for n in chunk])
            logits = scorer.model(
                encoder_outputs=(encoder_hidden[owner],),
                attention_mask=ctx_mask[owner],
                decoder_input_ids=decoder_ids,
                decoder_attention_mask=label_mask,
                use_cache=False,
            ).logits
            keep = label_mask.bool()
            selected = torch.log_softmax(logits[keep].float(), dim=-1)
            token_logprobs = selected.gather(1, labels[keep][:, None])[:, 0]
            for n, total in zip(chunk, row_sums(token_logprobs, keep), strict=True):
                sums[n] = total
        return collect(questions, sums, lengths)

    def score_naive(self, scorer, context: list[int], candidate: list[int]) -> CandidateScore:
        logits = scorer.model(
            input_ids=torch.tensor([context], device=scorer.device),
            decoder_input_ids=torch.tensor([[self._decoder_start(scorer), *candidate[:-1]]], device=scorer.device),
        ).logits[0]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        picked = logprobs.gather(1, torch.tensor(candidate, device=scorer.device)[:, None])[:, 0]
        return candidate_score(float(picked.double().sum()), len(candidate))

    @staticmethod
    def _decoder_start(scorer) -> int:
        start = getattr(scorer.model.config, "decoder_start_token_id", None)
        return scorer.pad_id if start is None else start

    def prompt_span(self, width: int, length: int) -> slice:
        return slice(0, length)  # an encoder reads either way

    def new_tokens(self, output: torch.Tensor, width: int) -> torch.Tensor:
        return output[:, 1:]  # after the decoder start token


LM_KINDS: dict[str, LMKind] = {kind.name: kind for kind in (CausalLM(), Seq2SeqLM())}


def lm_kind(name: str) -> LMKind:
    try:
        return LM_KINDS[name]
    except KeyError:
        raise ValueError(f"a language model is {' or '.join(LM_KINDS)}, not {name!r}") from None


def candidate_score(sum_logprob: float, n_tokens: int) -> CandidateScore:
    return CandidateScore(loss=-sum_logprob / n_tokens, sum_logprob=sum_logprob, n_tokens=n_tokens)


def collect(questions: Sequence, sums: list[float], lengths: list[int]) -> list[list[CandidateScore]]:
    """Per question, its candidates' scores from the flat ``sums`` and ``lengths``."""
    results, n = [], 0
    for q in questions:
        results.append([candidate_score(sums[n + k], lengths[n + k]) for k in range(len(q.candidates))])
        n += len(q.candidates)
    return results


def row_sums(token_logprobs: torch.Tensor, keep: torch.Tensor) -> list[float]:
    """Per row of ``keep`` (a padded batch), the sum of its kept tokens' log-probabilities (float64)."""
    rows = torch.arange(keep.shape[0], device=keep.device)[:, None].expand_as(keep)[keep]
    sums = torch.zeros(keep.shape[0], dtype=torch.float64, device=keep.device)
    sums.index_add_(0, rows, token_logprobs.double())
    return sums.tolist()


def special_tokens_around(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a text (BART: <s> ... </s>; T5: ... </s>),
    so that a context can be truncated first and framed after."""
    plain = tokenizer("x", add_special_tokens=False)["input_ids"]
    framed = tokenizer("x", add_special_tokens=True)["input_ids"]
    for start in range(len(framed) - len(plain) + 1):
        if framed[start : start + len(plain)] == plain:
            return framed[:start], framed[start + len(plain) :]
    return [], []


def _output_cache(out):
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


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
