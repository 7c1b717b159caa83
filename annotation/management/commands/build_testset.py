from django.core.management.base import BaseCommand

from annotation.models import JobKind
from annotation.services.job_commands import format_report, job_run_here
from annotation.services.job_handlers import HANDLERS


class Command(BaseCommand):
    help = "Build a frozen release: 1 ground truth + k false candidates per question (Sato et al. §3.2)."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--name", required=True, help="release name (a new slug)")
        parser.add_argument("--false", type=int, default=3, dest="false_per_question")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--rules", type=int, default=None, help="filter rules version (default: newest)")

    def handle(self, *args, **o):
        params = {
            "dataset": o["dataset"],
            "name": o["name"],
            "false_per_question": o["false_per_question"],
            "seed": o["seed"],
            "rules_version": o["rules"],
        }
        job = job_run_here(kind=JobKind.BUILD_TESTSET, params=params, handler=HANDLERS[JobKind.BUILD_TESTSET])
        self.stdout.write(format_report(job.result))
