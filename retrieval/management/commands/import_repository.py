from django.core.management.base import BaseCommand

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from retrieval.job_params import ImportRepositoryParams


class Command(BaseCommand):
    help = "Import (or add to) an utterance repository from a file, streaming, de-duplicated by normalised text."

    def add_arguments(self, parser):
        job_params_arguments(parser, ImportRepositoryParams)

    def handle(self, *args, **o):
        params = job_params_from_options(ImportRepositoryParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
