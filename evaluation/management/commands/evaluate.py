from django.core.management.base import BaseCommand, CommandError

from core.commands import format_report, job_execute_here, job_params_arguments
from core.errors import UserError
from evaluation.job_params import EvaluateParams
from evaluation.services.evaluations import evaluation_start


class Command(BaseCommand):
    help = "Selection accuracy of a system on a test set (runs here; --background sends it to the gpu queue)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--testset", "--release", dest="testset", required=True, help="test set name (--release: an alias)"
        )
        parser.add_argument("--system", required=True, help="system name (see register_system)")
        parser.add_argument("--background", action="store_true", help="enqueue the job for a worker instead")
        job_params_arguments(parser, EvaluateParams)

    def handle(self, *args, **o):
        try:
            evaluation, job = evaluation_start(
                testset_name=o["testset"],
                system_name=o["system"],
                enqueue=o["background"],
                batch_questions=o["batch_questions"],
                device=o["device"],
            )
        except UserError as exc:
            raise CommandError(str(exc)) from None
        if job is None:
            self.stdout.write(format_report(evaluation.summary))
            return
        if o["background"]:
            self.stdout.write(f"evaluation #{evaluation.pk}: job #{job.pk} sent to the workers")
            return
        job = job_execute_here(job=job)
        self.stdout.write(format_report(job.result))
