from django.core.management.base import BaseCommand, CommandError

from core.errors import UserError
from evaluation.models import SystemDtype, SystemKind
from evaluation.models.system import TFIDF_BASELINE
from evaluation.services.systems import system_register


class Command(BaseCommand):
    help = (
        "Register (or update) a system to evaluate: a checkpoint (a local directory or a Hugging Face model id, "
        "fetched now and pinned to its commit) or a plugin class."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="system name (a slug)")
        parser.add_argument("--kind", required=True, choices=SystemKind.values)
        parser.add_argument(
            "--checkpoint",
            default="",
            help="causal, seq2seq: a local model directory, or a Hugging Face model id (gpt2, org/name, "
            "org/name@revision; safetensors weights only); the TF-IDF plugin: an utterance file (one per line) to "
            "fit its IDF on",
        )
        parser.add_argument(
            "--tokenizer", default="", help="a local tokenizer directory or Hugging Face id (default: the checkpoint's)"
        )
        parser.add_argument(
            "--plugin",
            default="",
            help=f"dotted path of a class with losses(contexts, candidates); shipped: {TFIDF_BASELINE} (TF-IDF)",
        )
        parser.add_argument("--dtype", default=SystemDtype.AUTO, choices=SystemDtype.values)
        parser.add_argument("--max-context-tokens", type=int, default=512)
        parser.add_argument("--max-candidate-tokens", type=int, default=128)
        parser.add_argument(
            "--separator", default="\\n", help=r"between turns; \n for a newline, {eos} for the EOS token"
        )
        parser.add_argument("--speaker-tags", action="store_true", help='prefix turns with "A: " / "B: "')
        parser.add_argument("--eos-after-candidate", action="store_true", help="score the EOS token after a candidate")
        parser.add_argument(
            "--compile",
            action="store_true",
            help="score with a torch.compile'd model (causal; compiled once per worker)",
        )
        parser.add_argument(
            "--chat-template",
            action="store_true",
            help="render the context with the tokenizer's chat template (causal; user/assistant messages, "
            "as lm-eval's --apply_chat_template); the separator and speaker tags are then not used",
        )
        parser.add_argument("--description", default="")

    def handle(self, *args, **o):
        try:
            system = system_register(
                name=o["name"],
                kind=o["kind"],
                checkpoint=o["checkpoint"],
                tokenizer_path=o["tokenizer"],
                plugin=o["plugin"],
                dtype=o["dtype"],
                max_context_tokens=o["max_context_tokens"],
                max_candidate_tokens=o["max_candidate_tokens"],
                turn_separator=o["separator"].replace("\\n", "\n").replace("\\t", "\t"),
                speaker_tags=o["speaker_tags"],
                eos_after_candidate=o["eos_after_candidate"],
                compile_model=o["compile"],
                chat_template=o["chat_template"],
                description=o["description"],
            )
        except UserError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"system {system.name} ({system.kind}) registered")
