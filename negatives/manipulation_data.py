"""What a manipulation (negatives.manipulation) takes and gives: its settings, the responses it
reads, each word's score and the negatives it makes; and the dialogue texts a masked LM reads
(the context as one segment, the (context, turn) pairs it is fine-tuned on)."""

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ManipulationSettings:
    threshold: float = 0.5
    per_question: int = 1
    min_words: int = 3  # the paper skips shorter responses
    max_mask_share: float = 1.0  # 1.0: every selected word is replaced, as in the paper
    replace_with_context: bool = False  # the paper replaces without the context
    # True: punctuation is a word like any other, as in the paper's BERT input: it may be selected,
    # and a word may become punctuation ("Yes , you did ." -> "Yes . you did ?"). False: only words
    # with a letter or digit are replaced, and only by pieces with one.
    punctuation: bool = False
    # Park et al.'s own setting (negatives.paper_setting): one segment, the previous turn, per token, >=
    paper: bool = False
    # True: a word of several WordPiece tokens is never replaced: its pieces are chosen one by one,
    # and together they make no word ("debit" -> "car" + "##ist"). The paper's setting scores pieces
    # on their own and is unaffected.
    single_piece_words: bool = True
    top_k: int = 10  # where samples after the first one are drawn from
    seed: int = 0
    batch_tokens: int = 8192  # padded tokens per forward pass

    def describe(self) -> dict:
        return {
            "threshold": self.threshold,
            "per_question": self.per_question,
            "min_words": self.min_words,
            "max_mask_share": self.max_mask_share,
            "replace_with_context": self.replace_with_context,
            "top_k": self.top_k,
            "seed": self.seed,
            # only when on by default: a setup from before the option (punctuation replaced) has none
            **({} if self.punctuation else {"punctuation": False}),
            **({"paper": True} if self.paper else {}),  # a setup from before the option has none
            **({"single_piece_words": True} if self.single_piece_words else {}),  # likewise
        }


@dataclass(frozen=True)
class Item:
    key: int  # seeds the samples of this response (the question id)
    context: list[str]
    response: str


@dataclass
class Word:
    index: int
    text: str
    start: int  # character span in the response
    end: int
    pieces: list[int]  # token indexes within the response's tokens


@dataclass
class WordScore:
    index: int
    text: str
    score: float
    logp_context: float
    logp_alone: float


@dataclass
class Negative:
    text: str
    sample: int  # 0: the argmax negative; k: the k-th seeded sample
    replacements: list[dict]  # [{"word": index, "original": str, "replacement": str}]


@dataclass
class Manipulation:
    outcome: str  # "generated", "no_word_selected", "punctuation_only", "several_pieces_only", "too_short", ...
    words: list[WordScore] = field(default_factory=list)
    selected: list[int] = field(default_factory=list)
    negatives: list[Negative] = field(default_factory=list)
    # the response's WordPiece tokens, and those of its selected words (the paper's share is per token)
    tokens: int = 0
    tokens_selected: int = 0


CONTEXT_TURNS = 3  # turns of context a fine-tuning text gets: as many as a question holds by default


def context_text(turns: list[str]) -> str:
    """The context as one segment: its non-blank turns joined by a space, oldest first."""
    return " ".join(turn.strip() for turn in turns if turn.strip())


def dialogue_pairs(turns: list[str]) -> Iterator[tuple[str, str]]:
    """``(context, turn)`` for each turn of a dialogue: the turns before it (up to
    ``CONTEXT_TURNS``) as one segment, the texts a masked LM is fine-tuned on."""
    for i, turn in enumerate(turns):
        yield context_text(turns[max(0, i - CONTEXT_TURNS) : i]), turn
