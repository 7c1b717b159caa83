from django.core.management.base import BaseCommand, CommandError

from core.commands import format_report, job_execute_here, job_params_arguments
from core.errors import UserError
from evaluation.job_params import GenerateParams
from evaluation.services.generations import generation_start, generation_summary


class Command(BaseCommand):
    help = (
        "One response per context of a dataset from a system, greedy or nucleus "
        "(runs here; --background sends it to the gpu queue)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--system", required=True, help="system name (see register_system)")
        parser.add_argument("--dataset", required=True, help="dataset name: its questions' contexts are answered")
        parser.add_argument("--strategy", choices=["greedy", "nucleus"], default="greedy")
        parser.add_argument(
            "--top-p", type=float, default=0.9, help="nucleus: keep the smallest token set of this mass"
        )
        parser.add_argument("--temperature", type=float, default=1.0, help="nucleus: logits are divided by it")
        parser.add_argument("--max-new-tokens", type=int, default=40)
        parser.add_argument("--seed", type=int, default=0, help="nucleus: the same seed gives the same responses")
        parser.add_argument("--background", action="store_true", help="enqueue the job for a worker instead")
        job_params_arguments(parser, GenerateParams)

    def handle(self, *args, **o):
        try:
            generation, job = generation_start(
                system_name=o["system"],
                dataset_name=o["dataset"],
                strategy=o["strategy"],
                top_p=o["top_p"],
                temperature=o["temperature"],
                max_new_tokens=o["max_new_tokens"],
                seed=o["seed"],
                enqueue=o["background"],
                batch_size=o["batch_size"],
                device=o["device"],
            )
        except UserError as exc:
            raise CommandError(str(exc)) from None
        if job is None:
            self.stdout.write(format_report(generation_summary(generation=generation)))
            return
        if o["background"]:
            self.stdout.write(f"generation #{generation.pk}: job #{job.pk} sent to the workers")
            return
        job = job_execute_here(job=job)
        self.stdout.write(format_report(job.result))
