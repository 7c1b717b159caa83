from django.core.management.base import BaseCommand

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from pairs.job_params import ImportPairsParams


class Command(BaseCommand):
    help = (
        "Import a pair set from JSON lines (docs/pairs.md): one pair per line with context, correct, incorrect "
        "and type. One bad line and nothing is imported; the error names the line and the field."
    )

    def add_arguments(self, parser):
        job_params_arguments(parser, ImportPairsParams)

    def handle(self, *args, **o):
        params = job_params_from_options(ImportPairsParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
