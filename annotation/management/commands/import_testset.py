from django.core.management.base import BaseCommand, CommandError

from annotation.job_params import ImportHFTestsetParams, ImportTestsetParams
from core.commands import format_report, job_params_arguments, job_params_from_options, job_run_here

FORMATS = ("tsv", "hf")


class Command(BaseCommand):
    help = (
        "Import a released test set: TSV (context turns, ground truth, false candidates) and its "
        "human_scores.jsonl as a dataset with scores; or (--format hf) a test set folder written by "
        "export_testset --format hf as a dataset and a frozen test set."
    )

    def add_arguments(self, parser):
        # One command, two kinds: the TSV's options are None when not given (the hf format refuses them).
        job_params_arguments(parser, ImportTestsetParams, names=["path"])
        parser.add_argument("--format", choices=FORMATS, default="tsv")
        job_params_arguments(parser, ImportHFTestsetParams, names=["dataset", "name"])
        job_params_arguments(
            parser, ImportTestsetParams, names=["scores_path", "context_turns", "encoding"], defaults=False
        )

    def handle(self, *args, **o):
        if o["format"] == "hf":
            given = [
                flag
                for flag, key in (
                    ("--scores", "scores_path"),
                    ("--context-turns", "context_turns"),
                    ("--encoding", "encoding"),
                )
                if o[key] is not None
            ]
            if given:
                raise CommandError(f"{', '.join(given)}: for the tsv format only")
            params = job_params_from_options(ImportHFTestsetParams, o)
        else:
            if o["dataset"] is None:
                raise CommandError("--dataset is required for the tsv format")
            if o["name"] is not None:
                raise CommandError("--name: for the hf format only (a TSV is imported as a dataset, not a test set)")
            params = job_params_from_options(ImportTestsetParams, o)
        self.stdout.write(format_report(job_run_here(params=params).result))
