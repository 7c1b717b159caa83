from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.job_params import ImportTestsetParams
from core.commands import format_report, job_run_here


class Command(BaseCommand):
    help = (
        "Import a released test set (TSV: context turns, ground truth, false candidates) and its "
        "human_scores.jsonl as a dataset with scores."
    )

    def add_arguments(self, parser):
        parser.add_argument("tsv", type=Path)
        parser.add_argument("--scores", type=Path, help="human_scores.jsonl aligned with the TSV")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--context-turns", type=int, default=ImportTestsetParams.default("context_turns"))
        parser.add_argument("--encoding", default=ImportTestsetParams.default("encoding"))

    def handle(self, *args, **o):
        params = ImportTestsetParams(
            path=str(o["tsv"].resolve()),
            scores_path=str(o["scores"].resolve()) if o["scores"] else None,
            dataset=o["dataset"],
            context_turns=o["context_turns"],
            encoding=o["encoding"],
        )
        self.stdout.write(format_report(job_run_here(params=params).result))
