from django.core.management.base import BaseCommand

from annotation.job_params import ImportDialoguesParams
from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here


class Command(BaseCommand):
    help = "Import dialogues as questions: context turns + the next turn as ground truth."

    def add_arguments(self, parser):
        job_params_arguments(parser, ImportDialoguesParams)

    def handle(self, *args, **o):
        params = job_params_from_options(ImportDialoguesParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
