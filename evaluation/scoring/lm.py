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

What differs between a causal LM and an encoder-decoder is the kind's (lm_kinds.py); this class holds
what they share: rendering, encoding and truncating, batching and padding.

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
from .body import PackedBody
from .chat import ChatTemplate
from .lm_kinds import lm_kind

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
        self.lm = lm_kind(kind)
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
        self.strategy = strategy
        self.model = model.eval()
        # what the packed causal path runs: the compiled body (compiled.py), or the eager packed
        # body (shared weights, the fastest eager GELU, the last layer's MLP only where an output
        # is read; body.py); None where the kind or the strategy has no packed path
        self.packed_body = self.lm.packed_body(model, strategy=strategy, compile_model=compile_model)
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
        self._framing = self.lm.framing(tokenizer)
        # the fast path applies the output head itself: a model that rescales its logits after it
        # is scored by the naive path instead
        self._plain_head = self.lm.plain_output_head(model.config)
        limit = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", None)
        if limit:
            max_context_tokens, self.max_candidate_tokens = self.lm.token_limits(
                limit=limit,
                max_context_tokens=max_context_tokens,
                max_candidate_tokens=max_candidate_tokens,
                framing_tokens=sum(map(len, self._framing)),
            )
        self.max_context_tokens = max_context_tokens
        # transformers 5 renamed the forward argument past_key_values to cache
        parameters = inspect.signature(model.base_model.forward).parameters
        self.cache_kwarg = "cache" if "cache" in parameters else "past_key_values"

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
        before, after = self._framing
        encoded, i = [], 0
        for ctx, cands in zip(contexts, candidates, strict=True):
            ctx = [*before, *ctx[-self.max_context_tokens :], *after]  # the end of a long context, framed
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
            return [[self.lm.score_naive(self, q.context, c) for c in q.candidates] for q in questions]
        return self.lm.score_fast(self, questions)

    # -- batches, shared by the kinds' fast paths --------------------------------------------

    def batches(self, questions: Sequence[Encoded]) -> list[list[int]]:
        """Questions sorted by context length (longest first), cut so that the padded contexts of a
        batch stay under ``context_budget`` tokens; candidates are chunked separately (``chunks``)."""
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

    def chunks(self, lengths: Sequence[int], *, context_width: int = 0) -> list[list[int]]:
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

    def pad(self, rows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[r, : len(row)] = 1
        return ids.to(self.device), mask.to(self.device)
