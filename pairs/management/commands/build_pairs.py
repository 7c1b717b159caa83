from django.core.management.base import BaseCommand

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from pairs.job_params import BuildPairsParams


class Command(BaseCommand):
    help = (
        "Build contrastive response pairs (Okano et al.) from a dataset's questions: each ground truth and a "
        "minimal edit of it (a substituted content word, a switched sentence type, a substituted function word). "
        "The pairs wait for review. Resumable: run again with the same settings to finish an interrupted build."
    )

    def add_arguments(self, parser):
        job_params_arguments(parser, BuildPairsParams)

    def handle(self, *args, **o):
        params = job_params_from_options(BuildPairsParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
