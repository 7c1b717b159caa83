"""Systems to rank: language models (causal, encoder-decoder), plugins, and external systems (responses only)."""

from django.db import models
from django.db.models import Q

from core.hub import REVISION_SEPARATOR

# The model-free baseline that ships as a plugin (evaluation/baselines.py), named where a system is made.
TFIDF_BASELINE = "evaluation.baselines.TfidfBaseline"


class SystemKind(models.TextChoices):
    CAUSAL = "causal", "causal language model"
    SEQ2SEQ = "seq2seq", "encoder-decoder model"
    PLUGIN = "plugin", "plugin class (losses(contexts, candidates))"
    # Responses only, imported with their human ratings (e.g. the systems of Zhao et al. 2020):
    # ranked by humans and reference-based metrics, never scored on a test set.
    EXTERNAL = "external", "external (imported responses only)"


class SystemDtype(models.TextChoices):
    AUTO = "auto", "auto (bfloat16/float16 on a GPU, float32 on a CPU)"
    FLOAT32 = "float32", "float32"
    BFLOAT16 = "bfloat16", "bfloat16"
    FLOAT16 = "float16", "float16"


class ContextForm:
    """How a system's model reads a context (``System.context_form``), for whoever describes its task."""

    CHAT = "chat template"
    PLAIN = "plain template"


class System(models.Model):
    """A response-generation system, scored by how likely it finds each candidate given the context.

    Weights come from a local directory or from a Hugging Face model id (core.hub): a hub model is
    pinned to the commit its name resolved to when it was registered (``checkpoint_revision``), and
    only its safetensors weights are loaded. The context template turns
    the context turns into the text the model is conditioned on: turns joined by
    ``turn_separator`` (``{eos}`` stands for the tokenizer's end-of-sequence token), optionally
    prefixed with speaker tags (``A: ``, ``B: ``), and followed by the separator (and the next
    speaker tag) so that the candidate starts a new turn. With ``chat_template`` (causal only) the
    tokenizer's chat template renders the turns as user/assistant messages instead, and the
    separator and speaker tags play no part (evaluation/scoring/chat.py).
    """

    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=SystemKind.choices)
    checkpoint = models.CharField(
        max_length=1000,
        blank=True,
        help_text="Causal, seq2seq: a local model directory (config and weights), or a Hugging Face model id "
        "(gpt2, org/name, org/name@revision) fetched into the Hugging Face cache (safetensors weights only) when "
        "the system is saved. Plugin: what the plugin reads, if anything; the shipped TF-IDF baseline "
        f"({TFIDF_BASELINE}) fits its IDF on the utterance file named here (one utterance per line), or on the "
        "scored batch when it is empty.",
    )
    checkpoint_revision = models.CharField(
        max_length=64,
        blank=True,
        help_text="The commit a Hugging Face checkpoint resolved to when the system was saved: the weights every "
        "evaluation loads. Empty for a local directory.",
    )
    tokenizer_path = models.CharField(
        max_length=1000,
        blank=True,
        help_text="Tokenizer: a local directory or a Hugging Face model id (default: the checkpoint's).",
    )
    tokenizer_revision = models.CharField(
        max_length=64, blank=True, help_text="The commit a Hugging Face tokenizer resolved to when saved."
    )
    plugin = models.CharField(
        max_length=300,
        blank=True,
        help_text="Plugin: the dotted path of a class with losses(contexts, candidates), one loss per candidate "
        f"(the lowest is selected). Shipped: {TFIDF_BASELINE}, a model-free TF-IDF baseline (Lowe et al. 2015).",
    )
    dtype = models.CharField(max_length=16, choices=SystemDtype.choices, default=SystemDtype.AUTO)
    max_context_tokens = models.PositiveIntegerField(default=512, help_text="Longer contexts keep their end.")
    max_candidate_tokens = models.PositiveIntegerField(default=128, help_text="Longer candidates keep their start.")
    turn_separator = models.CharField(max_length=100, default="\n", blank=True)
    speaker_tags = models.BooleanField(default=False, help_text='Prefix turns with "A: " / "B: ".')
    eos_after_candidate = models.BooleanField(
        default=False, help_text="Score the end-of-sequence token after each candidate (end of turn)."
    )
    compile_model = models.BooleanField(
        default=False,
        help_text="Score with a torch.compile'd model (causal LMs): the first batches compile (tens of seconds, "
        "once per worker), then the scoring runs 10-20 % faster on a CPU, 1.7x on a GPU (bf16). Falls back to eager "
        "mode on failure.",
    )
    chat_template = models.BooleanField(
        default=False,
        help_text="Render the context with the tokenizer's chat template (causal LMs): the turns as alternating "
        "user/assistant messages, the last one from the user, the candidate as the next assistant message, as "
        "lm-eval's --apply_chat_template does. The separator and speaker tags are then not used.",
    )
    description = models.TextField(blank=True)
    # Recorded at registration from the checkpoint folder's marker (core.toy_models), not from a
    # name: a toy model (the demo's) is labelled on every page that shows its numbers, whatever the
    # system is called, and a real checkpoint never is.
    toy_model = models.BooleanField(
        default=False,
        editable=False,
        help_text="A toy model (its checkpoint's config says so): trained in seconds for trying the workflow; "
        "its numbers say nothing about real systems.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=[k.value for k in SystemKind]), name="system_kind_valid"),
            models.CheckConstraint(condition=Q(dtype__in=[d.value for d in SystemDtype]), name="system_dtype_valid"),
            models.CheckConstraint(
                condition=(Q(kind="plugin") & ~Q(plugin=""))
                | (Q(kind__in=["causal", "seq2seq"]) & ~Q(checkpoint=""))
                | Q(kind="external"),
                name="system_plugin_or_checkpoint",
            ),
            models.CheckConstraint(
                condition=Q(max_context_tokens__gte=1) & Q(max_candidate_tokens__gte=1), name="system_max_tokens_ge_1"
            ),
            # only the packed causal path runs a compiled body
            models.CheckConstraint(
                condition=Q(compile_model=False) | Q(kind="causal"), name="system_compile_only_causal"
            ),
            # the candidate follows the rendered template in one causal sequence
            models.CheckConstraint(
                condition=Q(chat_template=False) | Q(kind="causal"),
                name="system_chat_template_only_causal",
                violation_error_message="A chat template applies to causal systems only.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def tokenizer_dir(self) -> str:
        return self.tokenizer_path or self.checkpoint

    @property
    def revision(self) -> str:
        """The exact weights of a Hugging Face checkpoint, ``repo@commit`` (and the tokenizer's when it
        comes from another hub model); empty for a local directory or a plugin."""
        if not self.checkpoint_revision:
            return ""
        text = _pinned(self.checkpoint, self.checkpoint_revision)
        if self.tokenizer_revision:
            text += f" (tokenizer {_pinned(self.tokenizer_path, self.tokenizer_revision)})"
        return text

    @property
    def context_form(self) -> str:
        """``ContextForm.CHAT`` or ``ContextForm.PLAIN``: the text a model system is conditioned on."""
        return ContextForm.CHAT if self.chat_template else ContextForm.PLAIN


def _pinned(name: str, commit: str) -> str:
    """``repo@commit`` of a hub name that may ask for a branch or tag (``repo@main``)."""
    return f"{name.partition(REVISION_SEPARATOR)[0]}{REVISION_SEPARATOR}{commit}"
