"""The rules of a build, one factory per pair type, and what they need from the database: the
bigram model of a repository (fitted once per repository content version and kept on disk) and
the noun lexicon."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from annotation.models import Repository
from core.errors import UserError
from pairs.edits import EditRule, PairType
from pairs.selectors import repository_texts


@dataclass(frozen=True)
class RuleInputs:
    criteria: tuple[str, ...] = ()
    repository: Repository | None = None


def bigram_path(repository: Repository) -> Path:
    return Path(settings.WELLCHOSEN_DATA_DIR) / "pairs" / f"bigram-{repository.pk}-v{repository.content_version}.npz"


def bigram_for_repository(repository: Repository):
    """The repository's bigram model: loaded from disk, or fitted on its utterances and saved."""
    from pairs.bigram import BigramLM

    path = bigram_path(repository)
    if path.is_file():
        return BigramLM.load(path)
    lm = BigramLM.fit(repository_texts(repository=repository))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    lm.save(partial)
    partial.replace(path)  # a reader never sees half a file
    return lm


def _content(inputs: RuleInputs) -> EditRule:
    from pairs.nouns import NounLexicon
    from pairs.rules.content_words import ContentWordRule

    if inputs.repository is None:
        raise UserError("substituted content words need a repository (the bigram model's text)")
    return ContentWordRule(
        lm=bigram_for_repository(inputs.repository), lexicon=NounLexicon.load(), criteria=inputs.criteria
    )


def _sentence(inputs: RuleInputs) -> EditRule:
    from pairs.rules.sentence_type import SentenceTypeRule

    return SentenceTypeRule()


def _function(inputs: RuleInputs) -> EditRule:
    from pairs.rules.function_words import FunctionWordRule

    return FunctionWordRule()


RULE_FACTORIES: dict[str, Callable[[RuleInputs], EditRule]] = {
    PairType.CONTENT: _content,
    PairType.SENTENCE: _sentence,
    PairType.FUNCTION: _function,
}


def rules_build(*, types: Sequence[str], inputs: RuleInputs) -> list[EditRule]:
    return [RULE_FACTORIES[t](inputs) for t in PairType.ALL if t in types]
