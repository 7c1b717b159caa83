from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import format_report
from core.errors import UserError
from negatives.demo_mlm import mlm_default
from negatives.services.finetuning import mlm_finetune


class Command(BaseCommand):
    help = (
        "Fine-tune a masked LM on dialogue text with the masked-LM objective (Park et al. fine-tuned "
        "bert-base-uncased on DailyDialog train for one epoch) and save it, with its tokenizer, in a new folder."
    )

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument(
            "--dataset", metavar="NAME", help="the texts of this dataset: its context turns and ground truths"
        )
        source.add_argument("--repository", metavar="NAME", help="the utterances of this repository")
        parser.add_argument(
            "--out", type=Path, required=True, metavar="DIR", help="folder to create for the fine-tuned model"
        )
        parser.add_argument(
            "--mlm",
            default="",
            metavar="NAME",
            help="masked LM to start from: a local directory or a Hugging Face model id, optionally @revision "
            "(default: WELLCHOSEN_MLM_MODEL, else the demo's masked LM)",
        )
        parser.add_argument("--epochs", type=float, default=1.0, help="passes over the texts (default 1)")
        parser.add_argument("--batch-size", type=int, default=32, help="texts per step (default 32)")
        parser.add_argument("--learning-rate", type=float, default=5e-5, help="peak learning rate (default 5e-5)")
        parser.add_argument("--max-length", type=int, default=128, help="tokens kept per text (default 128)")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **o):
        base, setting = (o["mlm"], "--mlm") if o["mlm"] else mlm_default()
        try:
            report = mlm_finetune(
                out=o["out"],
                base=base,
                base_setting=setting,
                dataset_name=o["dataset"],
                repository_name=o["repository"],
                epochs=o["epochs"],
                batch_size=o["batch_size"],
                learning_rate=o["learning_rate"],
                max_length=o["max_length"],
                seed=o["seed"],
            )
        except UserError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(format_report(report))
