"""Park et al.'s own setting (``--paper``), as their released code runs it, beside this project's
variant (docs/negatives.md, "Park et al.'s setting"):

- **one segment**: the context and the response are one BERT segment (``[CLS] c r [SEP]``, every
  token type 0), not a sentence pair; the response alone is ``[CLS] r [SEP]`` as before;
- **the previous turn** alone as the context (their DailyDialog builder's);
- **per token**: every WordPiece token is scored, selected and replaced on its own (a continuation
  piece by a continuation piece), not whole words;
- a token is selected when its score is **at least** the threshold (``>=``), not above it.
"""

from dataclasses import dataclass


@dataclass
class Piece:
    """A WordPiece token of the response as the unit the paper scores: a word of one piece."""

    index: int
    text: str
    start: int
    end: int
    pieces: list[int]
    continuation: bool  # a "##" piece: replaced by a "##" piece, glued to the piece before it
    continued: bool  # the next piece is a "##" piece of the same word


def paper_pieces(response: str, offsets: list[tuple[int, int]], word_ids: list[int | None]) -> list[Piece]:
    """One unit per token of the response (``offsets`` and ``word_ids`` of its tokens, in order)."""
    units = []
    for k, (start, end) in enumerate(offsets):
        continuation = k > 0 and word_ids[k] == word_ids[k - 1]
        continued = k + 1 < len(offsets) and word_ids[k + 1] == word_ids[k]
        units.append(Piece(k, response[start:end], start, end, [k], continuation, continued))
    return units


def paper_context_input(
    tokenizer, *, context: list[str], response_ids: list[int], max_length: int
) -> tuple[list[int], int] | None:
    """``([CLS] previous turn + response [SEP]`` as one segment, the response's first index); the
    turn's oldest tokens are cut to fit; None when the response alone does not fit."""
    last = [turn for turn in context if turn.strip()][-1:]
    context_ids = tokenizer(last[0], add_special_tokens=False)["input_ids"] if last else []
    room = max_length - 2 - len(response_ids)
    if room < 0:
        return None
    context_ids = context_ids[len(context_ids) - room :] if len(context_ids) > room else context_ids
    ids = [tokenizer.cls_token_id, *context_ids, *response_ids, tokenizer.sep_token_id]
    return ids, 1 + len(context_ids)
