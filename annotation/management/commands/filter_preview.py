import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset, FilterRules
from annotation.selectors import filter_preview, filter_rules_get


class Command(BaseCommand):
    help = "Dry run of the filter rules: what each rule removes and how many questions can be built."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--rules", type=int, default=None, help="filter rules version (default: newest)")
        parser.add_argument("--false", type=int, default=3, dest="false_per_question")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        dataset = Dataset.objects.filter(name=o["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset {o['dataset']!r}")
        try:
            rules = filter_rules_get(version=o["rules"])
        except FilterRules.DoesNotExist:
            raise CommandError(f"no filter rules version {o['rules']}") from None
        preview = filter_preview(dataset=dataset, rules=rules, false_per_question=o["false_per_question"])
        if o["json"]:
            self.stdout.write(json.dumps(preview.as_dict(), indent=2, sort_keys=True))
            return
        d = preview.candidates_by_decision
        g = preview.questions_by_ground_truth
        self.stdout.write(
            f"dataset {preview.dataset}, rules v{preview.rules_version}, "
            f"{preview.false_per_question} false per question\n"
            f"  questions: {preview.questions}\n"
            f"    dropped (ground truth scored low): {g['rejected']}\n"
            f"    ground truth undecided:            {g['undecided']}\n"
            f"    too few false candidates left:     {preview.questions_too_few_false}\n"
            f"  false candidates: {preview.candidates}\n"
            f"    dropped as acceptable:    {d['acceptable']}\n"
            f"    dropped as ungrammatical: {d['ungrammatical']}\n"
            f"    undecided:                {d['undecided']}\n"
            f"    kept:                     {d['kept']}\n"
            f"  questions a test set would have: {preview.buildable_questions} "
            f"({preview.buildable_derived_questions} derived)\n"
        )
