"""Negatives made by manipulating the ground truth with a masked LM (Park et al., NAACL 2021).

For a context c and a response r:

1. **Score** each word x_i of r: mask it alone (the other words are left as they are, so no
   mask of an earlier word is still in place) and compute
   ``score(x_i) = log P(x_i | [c; r\\i]) - log P(x_i | r\\i)``. A word of several word pieces is
   masked whole, and its log-probability is the sum of its pieces' log-probabilities, each read
   at its own masked position in the one pass.
2. **Select** the words scoring above the threshold (none: no negative; fewer than
   ``min_words`` words: skipped, as in the paper).
3. **Replace**: mask every selected word at once and let the MLM predict each masked piece
   without the context; where its first choice is the original piece, take the second.

Beyond the paper: more than one negative per response (the first as above, the others sampled
from each position's top-k with a generator seeded by (seed, key, sample)), a cap on the share of
words masked (the highest-scoring words are kept), and replacement that sees the context.

Words are the tokenizer's pre-tokenizer words (``word_ids()``): for BERT, whitespace- and
punctuation-separated tokens, so "don't" is three words, as in the paper's BERT input.
"""

import math
from dataclasses import dataclass

import numpy as np

from .manipulation_data import (  # noqa: F401  (the manipulation's data, imported from here too)
    CONTEXT_TURNS,
    Item,
    Manipulation,
    ManipulationSettings,
    Negative,
    Word,
    WordScore,
    context_text,
    dialogue_pairs,
)
from .mlm import MaskedLM, Sequence
from .paper_setting import paper_context_input, paper_pieces


@dataclass
class _Encoded:
    item: Item
    words: list[Word]
    alone_ids: list[int]
    alone_types: list[int] | None
    alone_offset: int  # index of the response's first token in alone_ids
    pair_ids: list[int]
    pair_types: list[int] | None
    pair_offset: int
    response_ids: list[int]


class Manipulator:
    def __init__(self, mlm: MaskedLM, settings: ManipulationSettings = ManipulationSettings()) -> None:
        self.mlm = mlm
        self.settings = settings
        self._allowed_start, self._allowed_inside = self._allowed_tokens()
        # when punctuation is blocked, every piece of a replacement holds a letter or digit: no word
        # becomes punctuation, and no word goes on with a "##." piece
        alnum = self._alnum_pieces()
        self._allowed_word_start = self._allowed_start & alnum
        if not settings.punctuation:
            self._allowed_inside = self._allowed_inside & alnum

    def manipulate(self, items: list[Item]) -> list[Manipulation]:
        """One Manipulation per item, in order; every model call is batched across the items."""
        results: list[Manipulation | None] = [None] * len(items)
        encoded: list[tuple[int, _Encoded]] = []
        for i, item in enumerate(items):
            enc = self.encode(item)
            if isinstance(enc, str):
                results[i] = Manipulation(outcome=enc)
            else:
                encoded.append((i, enc))
        scores = self.score([enc for _, enc in encoded])
        replace: list[tuple[int, _Encoded, list[int]]] = []
        for (i, enc), word_scores in zip(encoded, scores, strict=True):
            threshold = self.settings.threshold
            above = [w for w in word_scores if (w.score >= threshold if self.settings.paper else w.score > threshold)]
            words_above = [w for w in above if self.settings.punctuation or _has_alnum(w.text)]
            # the paper's units are single pieces (negatives.paper_setting): its setting is unaffected
            selected = [
                w.index
                for w in words_above
                if not self.settings.single_piece_words or len(enc.words[w.index].pieces) == 1
            ]
            selected = self._capped(selected, word_scores)
            if selected:
                outcome = "generated"
            elif not above:
                outcome = "no_word_selected"
            else:  # only punctuation (replaced only with --punctuation), or only words of several pieces
                outcome = "several_pieces_only" if words_above else "punctuation_only"
            results[i] = Manipulation(
                outcome=outcome,
                words=word_scores,
                selected=selected,
                tokens=len(enc.response_ids),
                tokens_selected=sum(len(enc.words[index].pieces) for index in selected),
            )
            if selected:
                replace.append((i, enc, selected))
        for (i, _, _), negatives in zip(replace, self._replace(replace), strict=True):
            results[i].negatives = negatives
        return results

    # -- encoding ----------------------------------------------------------------------------

    def encode(self, item: Item) -> "_Encoded | str":
        """The item's words and inputs, or why it is not manipulated ("too_short", "too_long")."""
        tokenizer = self.mlm.tokenizer
        alone = tokenizer(item.response, return_offsets_mapping=True, return_token_type_ids=True)
        sequence_ids = alone.sequence_ids()
        response_index = [k for k, s in enumerate(sequence_ids) if s == 0]
        if not response_index:
            return "too_short"
        word_ids = alone.word_ids()
        words: dict[int, Word] = {}
        for k in response_index:
            start, end = alone["offset_mapping"][k]
            word = words.get(word_ids[k])
            if word is None:
                word = words[word_ids[k]] = Word(index=len(words), text="", start=start, end=end, pieces=[])
            word.end = end
            word.pieces.append(k - response_index[0])
        word_list = list(words.values())
        for word in word_list:
            word.text = item.response[word.start : word.end]
        if len(word_list) < self.settings.min_words:
            return "too_short"
        if len(alone["input_ids"]) > self.mlm.max_length:
            return "too_long"
        if self.settings.paper:
            return self._encode_paper(item, alone, response_index)
        tokenizer.truncation_side = "left"  # keep the turns nearest the response
        pair = tokenizer(
            context_text(item.context),
            item.response,
            return_token_type_ids=True,
            truncation="only_first",
            max_length=self.mlm.max_length,
        )
        pair_sequence = pair.sequence_ids()
        pair_index = [k for k, s in enumerate(pair_sequence) if s == 1]
        response_ids = [alone["input_ids"][k] for k in response_index]
        if [pair["input_ids"][k] for k in pair_index] != response_ids:
            return "too_long"  # the context left no room for the whole response
        types = self.mlm.uses_token_types
        return _Encoded(
            item=item,
            words=word_list,
            alone_ids=list(alone["input_ids"]),
            alone_types=list(alone["token_type_ids"]) if types else None,
            alone_offset=response_index[0],
            pair_ids=list(pair["input_ids"]),
            pair_types=list(pair["token_type_ids"]) if types else None,
            pair_offset=pair_index[0],
            response_ids=response_ids,
        )

    def _encode_paper(self, item: Item, alone, response_index: list[int]) -> "_Encoded | str":
        response_ids = [alone["input_ids"][k] for k in response_index]
        built = paper_context_input(
            self.mlm.tokenizer, context=item.context, response_ids=response_ids, max_length=self.mlm.max_length
        )
        if built is None:
            return "too_long"
        pair_ids, pair_offset = built
        types = self.mlm.uses_token_types
        return _Encoded(
            item=item,
            words=paper_pieces(
                item.response,
                [alone["offset_mapping"][k] for k in response_index],
                [alone.word_ids()[k] for k in response_index],
            ),
            alone_ids=list(alone["input_ids"]),
            alone_types=list(alone["token_type_ids"]) if types else None,
            alone_offset=response_index[0],
            pair_ids=pair_ids,
            pair_types=[0] * len(pair_ids) if types else None,  # one segment
            pair_offset=pair_offset,
            response_ids=response_ids,
        )

    # -- 1. scoring --------------------------------------------------------------------------

    def _masked(self, ids: list[int], offset: int, pieces: list[int]) -> tuple[list[int], list[int]]:
        masked = list(ids)  # a fresh copy for every variant: no mask stays in place
        positions = [offset + p for p in pieces]
        for position in positions:
            masked[position] = self.mlm.mask_id
        return masked, positions

    def score(self, encoded: list[_Encoded]) -> list[list[WordScore]]:
        """Every word's score (and its log-probabilities with and without the context), batched."""
        sequences: list[Sequence] = []
        for enc in encoded:
            for word in enc.words:
                ids, positions = self._masked(enc.pair_ids, enc.pair_offset, word.pieces)
                sequences.append(Sequence(ids, enc.pair_types, positions))
                ids, positions = self._masked(enc.alone_ids, enc.alone_offset, word.pieces)
                sequences.append(Sequence(ids, enc.alone_types, positions))
        log_probs = self.mlm.log_probs(sequences, batch_tokens=self.settings.batch_tokens)
        results, cursor = [], 0
        for enc in encoded:
            scores = []
            for word in enc.words:
                targets = [enc.response_ids[p] for p in word.pieces]
                with_context = _sum_at(log_probs[cursor], targets)
                alone = _sum_at(log_probs[cursor + 1], targets)
                cursor += 2
                scores.append(WordScore(word.index, word.text, with_context - alone, with_context, alone))
            results.append(scores)
        return results

    # -- 2. selection ------------------------------------------------------------------------

    def _capped(self, selected: list[int], scores: list[WordScore]) -> list[int]:
        share = self.settings.max_mask_share
        if share >= 1 or not selected:
            return selected
        limit = max(1, math.floor(share * len(scores)))
        best = sorted(selected, key=lambda index: (-scores[index].score, index))[:limit]
        return sorted(best)

    # -- 3. replacement ----------------------------------------------------------------------

    def _replace(self, batch: list[tuple[int, _Encoded, list[int]]]) -> list[list[Negative]]:
        sequences = []
        for _, enc, selected in batch:
            pieces = [p for index in selected for p in enc.words[index].pieces]
            if self.settings.replace_with_context:
                ids, positions = self._masked(enc.pair_ids, enc.pair_offset, pieces)
                sequences.append(Sequence(ids, enc.pair_types, positions))
            else:
                ids, positions = self._masked(enc.alone_ids, enc.alone_offset, pieces)
                sequences.append(Sequence(ids, enc.alone_types, positions))
        log_probs = self.mlm.log_probs(sequences, batch_tokens=self.settings.batch_tokens)
        return [
            self._negatives(enc, selected, rows.numpy())
            for (_, enc, selected), rows in zip(batch, log_probs, strict=True)
        ]

    def _negatives(self, enc: _Encoded, selected: list[int], rows: np.ndarray) -> list[Negative]:
        slots = []  # (word index, piece, original id, ranked allowed ids, their log-probs)
        row = 0
        for index in selected:
            for n, piece in enumerate(enc.words[index].pieces):
                if n or getattr(enc.words[index], "continuation", False):  # a "##" piece (--paper: on its own)
                    allowed = self._allowed_inside
                elif self.settings.punctuation:
                    allowed = self._allowed_start
                else:
                    allowed = self._allowed_word_start
                original = enc.response_ids[piece]
                logp = np.where(allowed, rows[row], -np.inf)
                logp[original] = -np.inf  # the original never comes back: its place goes to the second choice
                slots.append((index, logp))
                row += 1
        negatives: list[Negative] = []
        seen = {enc.item.response}
        first = self._compose(enc, selected, [int(np.argmax(logp)) for _, logp in slots])
        if first.text not in seen and _changes_every_word(first):
            negatives.append(first)
            seen.add(first.text)
        sample = 1
        attempts = 0
        while len(negatives) < self.settings.per_question and attempts < 5 * self.settings.per_question:
            attempts += 1
            rng = np.random.default_rng([self.settings.seed, enc.item.key, sample, attempts])
            chosen = [_sample_top_k(logp, self.settings.top_k, rng) for _, logp in slots]
            negative = self._compose(enc, selected, chosen, sample=sample)
            if negative.text in seen or not _changes_every_word(negative):
                continue
            negatives.append(negative)
            seen.add(negative.text)
            sample += 1
        return negatives

    def _compose(self, enc: _Encoded, selected: list[int], chosen: list[int], *, sample: int = 0) -> Negative:
        tokenizer = self.mlm.tokenizer
        text = enc.item.response
        replacements, cursor = [], 0
        spans = []
        for index in selected:
            word = enc.words[index]
            ids = chosen[cursor : cursor + len(word.pieces)]
            cursor += len(word.pieces)
            replacement = tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens(ids)).strip()
            glued = getattr(word, "continuation", False), getattr(word, "continued", False)
            if glued[0]:  # --paper: a "##" piece on its own, glued to the piece before it
                replacement = replacement.removeprefix(_continuing_prefix(tokenizer))
            spans.append((word.start, word.end, replacement, glued))
            replacements.append({"word": index, "original": word.text, "replacement": replacement})
        original = enc.item.response
        for start, end, replacement, (after_piece, before_piece) in sorted(spans, reverse=True):
            # pieces of one word (--paper) stay glued to each other
            fitted = spaced(original, start, end, replacement, lead=not after_piece, trail=not before_piece)
            text = text[:start] + fitted + text[end:]
        return Negative(text=text, sample=sample, replacements=replacements)

    def _alnum_pieces(self) -> np.ndarray:
        """Which vocabulary ids hold a letter or digit (the rest: punctuation, symbols, specials)."""
        size = self._allowed_start.shape[0]
        alnum = np.zeros(size, dtype=bool)
        for token, index in self.mlm.tokenizer.get_vocab().items():
            if index < size:
                alnum[index] = _has_alnum(token.removeprefix(_continuing_prefix(self.mlm.tokenizer)))
        return alnum

    def _allowed_tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """Which vocabulary ids may fill a word's first piece and its later pieces: never a special
        token nor a placeholder that is not a word (BERT's ``[unused12]``, ``<...>``); with WordPiece,
        a word starts with a plain piece (never a ``##`` continuation) and goes on with ``##`` pieces."""
        tokenizer = self.mlm.tokenizer
        size = self.mlm.model.get_output_embeddings().weight.shape[0]
        start = np.ones(size, dtype=bool)
        inside = np.ones(size, dtype=bool)
        start[len(tokenizer) :] = inside[len(tokenizer) :] = False
        for special in tokenizer.all_special_ids:
            if special is not None and special < size:
                start[special] = inside[special] = False
        for token, index in tokenizer.get_vocab().items():
            if index < size and _placeholder(token):
                start[index] = inside[index] = False
        prefix = _continuing_prefix(tokenizer)
        if prefix:
            for token, index in tokenizer.get_vocab().items():
                if index < size:
                    continuing = token.startswith(prefix)
                    start[index] = start[index] and not continuing
                    inside[index] = inside[index] and continuing
        return start, inside


def _placeholder(token: str) -> bool:
    """A vocabulary entry that is no piece of a word: ``[unused0]``, ``[UNK]``, ``<mask>``."""
    return len(token) > 2 and ((token[0] == "[" and token[-1] == "]") or (token[0] == "<" and token[-1] == ">"))


def _has_alnum(text: str) -> bool:
    return any(character.isalnum() for character in text)


def _continuing_prefix(tokenizer) -> str:
    model = getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)
    return getattr(model, "continuing_subword_prefix", "") or "" if type(model).__name__ == "WordPiece" else ""


def spaced(text: str, start: int, end: int, replacement: str, *, lead: bool = True, trail: bool = True) -> str:
    """The replacement, with a space where it would otherwise run into a neighbouring word: a word
    glued to punctuation ("Sure,") may be replaced by a word ("Sure well")."""
    if lead and replacement and start > 0 and text[start - 1].isalnum() and replacement[0].isalnum():
        replacement = " " + replacement
    if trail and replacement and end < len(text) and text[end].isalnum() and replacement[-1].isalnum():
        replacement = replacement + " "
    return replacement


def _changes_every_word(negative: Negative) -> bool:
    """Pieces differ from the original ones one by one; their joined text must differ too
    ("pla" + "##ying" is "playing" again) and must not be empty."""
    return all(r["replacement"] and r["replacement"].lower() != r["original"].lower() for r in negative.replacements)


def _sum_at(rows, targets: list[int]) -> float:
    return float(sum(rows[k, target] for k, target in enumerate(targets)))


def _sample_top_k(logp: np.ndarray, k: int, rng: np.random.Generator) -> int:
    top = np.argsort(-logp, kind="stable")[:k]
    top = top[np.isfinite(logp[top])]
    weights = np.exp(logp[top] - logp[top].max())
    return int(rng.choice(top, p=weights / weights.sum()))
