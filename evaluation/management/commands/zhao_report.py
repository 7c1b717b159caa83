import json

from django.core.management.base import BaseCommand, CommandError

from core.wordnet import WordNetMissing
from evaluation.human import HumanRatingsError
from evaluation.report import text_table, zhao_reference_report


class Command(BaseCommand):
    help = (
        "Rank the generation systems of Zhao et al. (2020) by human ratings and by BLEU-1/2, METEOR and "
        "ROUGE-L on their responses; print Spearman/Kendall of each metric against the human ranking "
        "(p-values, bootstrap CIs) and the split-half bound of the human ranking."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="dailydialog-zhao_eval.json (DSTC10 track 5 dev format)")
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument(
            "--trials", type=int, default=1000, help="bootstrap resamples and split-half trials (default 1000)"
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--aspect", default="appropriateness", help="which human rating (default appropriateness)")

    def handle(self, *args, **o):
        if o["trials"] < 1:
            raise CommandError("--trials must be at least 1")
        try:
            table = zhao_reference_report(o["path"], trials=o["trials"], seed=o["seed"], aspect=o["aspect"])
        except (HumanRatingsError, WordNetMissing) as error:
            raise CommandError(str(error)) from error
        if o["format"] == "json":
            self.stdout.write(json.dumps(table, indent=2))
        else:
            self.stdout.write(text_table(table))
