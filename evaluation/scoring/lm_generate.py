"""Batched decoding with a Hugging Face causal LM or encoder-decoder model (rules: see generate.py)."""

import copy
from collections.abc import Sequence

import torch
from transformers import LogitsProcessor, LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

from .base import ContextTemplate
from .chat import ChatTemplate
from .decoding import Decoding, Response, cut, stop_text
from .lm_kinds import lm_kind


class LMGenerator:
    """``generate(contexts)``: one response per context (its turns, oldest first) from a HF model."""

    def __init__(
        self,
        *,
        model,
        tokenizer,
        kind: str,
        template: ContextTemplate | ChatTemplate = ContextTemplate(),
        max_context_tokens: int = 512,
        batch_size: int = 32,
    ) -> None:
        self.lm = lm_kind(kind)
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.kind = kind
        self.template = template
        self.max_context_tokens = max_context_tokens
        self.batch_size = max(1, batch_size)
        self.device = next(model.parameters()).device
        chat = isinstance(template, ChatTemplate)
        # a chat response ends with the template's end-of-turn token; a plain one at the separator too
        self.stop = None if chat else stop_text(template.separator)
        config = model.generation_config
        eos = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
        if chat and template.end_of_turn_id is not None:
            eos.add(template.end_of_turn_id)
        model_eos = config.eos_token_id if isinstance(config.eos_token_id, list) else [config.eos_token_id]
        self.eos_ids = sorted(eos | {e for e in model_eos if e is not None})
        self.pad_id = next(
            (t for t in (tokenizer.pad_token_id, tokenizer.eos_token_id, config.pad_token_id) if t is not None), 0
        )
        self._framing = self.lm.framing(tokenizer)
        self._limit = getattr(model.config, "n_positions", None) or getattr(
            model.config, "max_position_embeddings", None
        )

    def render(self, turns: Sequence[str], *, max_tokens: int | None = None) -> str:
        if isinstance(self.template, ChatTemplate):  # drops the oldest turns of a long context
            return self.template.fitted(turns, max_tokens=max_tokens or self.max_context_tokens)
        return self.template.render(turns, eos=self.tokenizer.eos_token or "")

    def encode(self, contexts: Sequence[Sequence[str]], *, max_new_tokens: int) -> list[list[int]]:
        """Token ids of each rendered context, its end kept; encoder inputs framed with their specials."""
        tok = self.tokenizer
        room = self.max_context_tokens
        if self._limit:
            framing_tokens = sum(map(len, self._framing))
            room = min(
                room,
                self.lm.prompt_room(limit=self._limit, max_new_tokens=max_new_tokens, framing_tokens=framing_tokens),
            )
        room = max(1, room)
        before, after = self._framing
        rows = []
        texts = [self.render(t, max_tokens=room) for t in contexts]
        for ids in tok(texts, add_special_tokens=False)["input_ids"]:
            ids = [*before, *ids[-room:], *after]
            if not ids:  # an empty context: condition on a start token
                ids = [tok.bos_token_id if tok.bos_token_id is not None else self.pad_id]
            rows.append(ids)
        return rows

    def generate(
        self, contexts: Sequence[Sequence[str]], *, decoding: Decoding = Decoding(), seeds: Sequence[int] | None = None
    ) -> list[Response]:
        """Responses in the order of ``contexts``; ``seeds`` (one per context) are required for nucleus."""
        if decoding.strategy == "nucleus" and (seeds is None or len(seeds) != len(contexts)):
            raise ValueError("nucleus sampling needs one seed per context")
        rows = self.encode(contexts, max_new_tokens=decoding.max_new_tokens)
        # longest first, so that contexts of similar length share a batch (less padding)
        order = sorted(range(len(rows)), key=lambda i: (-len(rows[i]), i))
        responses: list[Response | None] = [None] * len(rows)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            batch_seeds = [seeds[i] for i in batch] if decoding.strategy == "nucleus" else None
            for i, response in zip(
                batch, self._generate_batch([rows[i] for i in batch], decoding, batch_seeds), strict=True
            ):
                responses[i] = response
        return responses  # type: ignore[return-value]

    @torch.inference_mode()
    def _generate_batch(self, rows: list[list[int]], decoding: Decoding, seeds: list[int] | None) -> list[Response]:
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            span = self.lm.prompt_span(width, len(row))
            ids[r, span] = torch.tensor(row, dtype=torch.long)
            mask[r, span] = 1
        processors = LogitsProcessorList()
        if seeds is not None:
            processors.append(SeededNucleusSampler(seeds, decoding.top_p, decoding.temperature, device=self.device))
        output = self.model.generate(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            generation_config=self._config(decoding),
            logits_processor=processors,
            **({"tokenizer": self.tokenizer} if self.stop else {}),
        )
        new = self.lm.new_tokens(output, width)
        return [self._response(row) for row in new.tolist()]

    def _response(self, tokens: list[int]) -> Response:
        """The text before the first stop, stripped, and how many generated tokens it took."""
        for n, token in enumerate(tokens):
            if token in self.eos_ids:
                tokens = tokens[:n]
                break
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        if self.stop and self.stop in text:
            # the shortest prefix whose text reaches the stop: its last token holds the stop
            low, high = 1, len(tokens)
            while low < high:
                middle = (low + high) // 2
                if self.stop in self.tokenizer.decode(tokens[:middle], skip_special_tokens=True):
                    high = middle
                else:
                    low = middle + 1
            tokens = tokens[: low - 1]
        return Response(cut(text, self.stop), len(tokens))

    def _config(self, decoding: Decoding):
        config = copy.deepcopy(self.model.generation_config)
        config.update(
            max_new_tokens=decoding.max_new_tokens,
            # sampling is done by SeededNucleusSampler: generate() only takes its (single) choice
            do_sample=False,
            num_beams=1,
            temperature=1.0,
            top_p=1.0,
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            encoder_no_repeat_ngram_size=0,
            min_length=0,
            eos_token_id=self.eos_ids or None,
            pad_token_id=self.pad_id,
            stop_strings=[self.stop] if self.stop else None,
        )
        return config


class SeededNucleusSampler(LogitsProcessor):
    """Samples each row from its own ``torch.Generator`` (top-p after temperature) and leaves only the
    sampled token, which greedy decoding then takes. ``generate``'s own sampling draws every row from
    one global stream, which would tie a response to the other contexts of its batch."""

    def __init__(self, seeds: Sequence[int], top_p: float, temperature: float, *, device) -> None:
        self.generators = [torch.Generator(device=device).manual_seed(int(seed)) for seed in seeds]
        self.warpers = [TemperatureLogitsWarper(temperature), TopPLogitsWarper(top_p)]

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        scores = scores.float()
        for warper in self.warpers:
            scores = warper(input_ids, scores)
        probs = torch.softmax(scores, dim=-1)
        picks = torch.cat([torch.multinomial(probs[r], 1, generator=gen) for r, gen in enumerate(self.generators)])
        chosen = torch.full_like(scores, -float("inf"))
        chosen[torch.arange(len(picks), device=scores.device), picks] = 0.0
        return chosen
