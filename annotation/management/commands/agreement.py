import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset
from annotation.selectors_agreement import dataset_agreement


class Command(BaseCommand):
    help = "Fleiss' kappa of a dataset's scores: six categories (0-5) and two classes (> 3 vs <= 3)."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        dataset = Dataset.objects.filter(name=o["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset {o['dataset']!r}")
        summary = dataset_agreement(dataset=dataset)
        if o["json"]:
            self.stdout.write(json.dumps(summary, indent=2, sort_keys=True))
            return

        def fmt(value):
            return "n/a" if value is None else f"{value:.3f}"

        self.stdout.write(
            f"dataset {dataset.name}: {summary['items']} items x {summary['raters']} raters "
            f"({summary['items_skipped']} items with another number of raters left out)\n"
            f"  Fleiss' kappa, 6 categories (0-5):     {fmt(summary['fleiss_kappa_6'])}\n"
            f"  Fleiss' kappa, 2 classes (>3 vs <=3): {fmt(summary['fleiss_kappa_2'])}\n"
        )
