from django.core.management.base import BaseCommand

from core.commands import format_report, job_run_here
from testsets.job_params import BuildTestsetParams


class Command(BaseCommand):
    help = "Build a frozen test set: 1 ground truth + k false candidates per question (Sato et al. §3.2)."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--name", required=True, help="test set name (a new slug)")
        parser.add_argument(
            "--false", type=int, default=BuildTestsetParams.default("false_per_question"), dest="false_per_question"
        )
        parser.add_argument("--seed", type=int, default=BuildTestsetParams.default("seed"))
        parser.add_argument("--rules", type=int, default=None, help="filter rules version (default: newest)")

    def handle(self, *args, **o):
        params = BuildTestsetParams(
            dataset=o["dataset"],
            name=o["name"],
            false_per_question=o["false_per_question"],
            seed=o["seed"],
            rules_version=o["rules"],
        )
        self.stdout.write(format_report(job_run_here(params=params).result))
