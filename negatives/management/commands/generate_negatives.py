from django.core.management.base import BaseCommand

from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here
from negatives.job_params import GenerateNegativesParams


class Command(BaseCommand):
    help = (
        "Generate false candidates by manipulating each question's ground truth with a masked LM (Park et al., "
        "NAACL 2021): words that the context makes likely are replaced by what the MLM predicts without the "
        "context. The negatives join the questions' pools. Resumable: finished questions are skipped."
    )

    def add_arguments(self, parser):
        job_params_arguments(parser, GenerateNegativesParams)

    def handle(self, *args, **o):
        params = job_params_from_options(GenerateNegativesParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
