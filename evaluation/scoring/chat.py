"""The chat-template context form: a system whose tokenizer carries a chat template is conditioned
the way an instruction-tuned model is used, as lm-evaluation-harness's ``--apply_chat_template``
does.

The context turns become alternating messages: the last turn is a ``user`` message and the turns
before it alternate backwards (``assistant``, ``user``, ...), so that the candidate is the next
``assistant`` message. The conditioning text is
``tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)``; the
candidate's own text follows it. The text is tokenized without adding special tokens (the template
writes its BOS and markers as text); when it does not start with the BOS text but the tokenizer
would put a start token before a text, that token's text is put in front, as lm-eval does (it
leaves ``add_special_tokens`` on unless the text starts with the BOS).

A context too long for ``max_tokens`` loses its oldest turns, whole, so that the template's start
(BOS, system prompt) stays; only a last turn that does not fit alone is cut, keeping its end.
"""

from collections.abc import Sequence

from core.errors import UserError

# roles of the context turns, counted backwards from the last one (the candidate answers it)
ROLES = ("user", "assistant")
# a text no template changes, to find what the template writes after an assistant message
_PROBE = "WellChosenProbe"


def chat_messages(turns: Sequence[str]) -> list[dict[str, str]]:
    """The turns as chat messages: the last one from the user, the earlier ones alternating backwards."""
    n = len(turns)
    return [{"role": ROLES[(n - 1 - i) % 2], "content": turn} for i, turn in enumerate(turns)]


def chat_template_check(tokenizer, *, where: str = "") -> None:
    """A UserError unless the tokenizer carries a chat template that renders the contexts we give it
    (some templates refuse a conversation that starts with an assistant message)."""
    name = where or getattr(tokenizer, "name_or_path", "") or "this tokenizer"
    if not getattr(tokenizer, "chat_template", None):
        raise UserError(
            f"the tokenizer of {name} has no chat template; register the system without --chat-template "
            "(plain template) or give a --tokenizer that carries one"
        )
    for turns in (["Hello."], ["Hello.", "Hi, how are you?"]):
        try:
            tokenizer.apply_chat_template(chat_messages(turns), tokenize=False, add_generation_prompt=True)
        except Exception as exc:  # noqa: BLE001 - jinja2 and the template's own raise_exception
            raise UserError(
                f"the chat template of {name} cannot render a {len(turns)}-turn context "
                f"(messages {', '.join(ROLES[(len(turns) - 1 - i) % 2] for i in range(len(turns)))}): {exc}"
            ) from None


class ChatTemplate:
    """Turns -> the conditioning text of the tokenizer's chat template (see the module docstring)."""

    def __init__(self, tokenizer) -> None:
        chat_template_check(tokenizer)
        self.tokenizer = tokenizer
        leading = _leading_special_ids(tokenizer)
        # what lm-eval's add_special_tokens would put before a text that does not start with the BOS
        self._start_text = tokenizer.decode(leading) if leading else ""
        self.end_of_turn_id = _end_of_turn_id(tokenizer)

    def render(self, turns: Sequence[str], *, eos: str = "") -> str:
        """The conditioning text: the messages and the prompt of the next assistant message."""
        text = self.tokenizer.apply_chat_template(chat_messages(turns), tokenize=False, add_generation_prompt=True)
        bos = self.tokenizer.bos_token
        if self._start_text and not (bos and text.startswith(bos)):
            text = self._start_text + text
        return text

    def fitted(self, turns: Sequence[str], *, max_tokens: int) -> str:
        """The conditioning text of the latest turns whose text fits ``max_tokens`` tokens (at least the last turn)."""
        turns = list(turns)
        text = self.render(turns)
        while len(turns) > 1 and self.n_tokens(text) > max_tokens:
            turns = turns[1:]
            text = self.render(turns)
        return text

    def n_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])


def _leading_special_ids(tokenizer) -> list[int]:
    """The special tokens the tokenizer puts before a text of its own accord (a BOS, for most)."""
    plain = tokenizer("x", add_special_tokens=False)["input_ids"]
    framed = tokenizer("x", add_special_tokens=True)["input_ids"]
    for start in range(len(framed) - len(plain) + 1):
        if framed[start : start + len(plain)] == plain:
            return framed[:start]
    return []


def _end_of_turn_id(tokenizer) -> int | None:
    """The special token that closes an assistant message in the template (``<|im_end|>``,
    ``<|eot_id|>``, ``<end_of_turn>``, ``</s>``...): the first special token the template writes
    after an assistant message's text; the tokenizer's EOS when it writes none."""
    messages = [*chat_messages(["Hello."]), {"role": ROLES[1], "content": _PROBE}]
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)
    except Exception:  # noqa: BLE001 - a template that refuses a closing assistant message
        return tokenizer.eos_token_id
    if _PROBE not in text:
        return tokenizer.eos_token_id
    after = text[text.rindex(_PROBE) + len(_PROBE) :]
    special = set(tokenizer.all_special_ids) | {
        i for i, token in getattr(tokenizer, "added_tokens_decoder", {}).items() if token.special
    }
    for token_id in tokenizer(after, add_special_tokens=False)["input_ids"]:
        if token_id in special:
            return token_id
    return tokenizer.eos_token_id
