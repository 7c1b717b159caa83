from django.core.management.base import BaseCommand

from core.commands import format_report, job_run_here
from pairs.job_params import ImportPairsParams


class Command(BaseCommand):
    help = (
        "Import a pair set from JSON lines (docs/pairs.md): one pair per line with context, correct, incorrect "
        "and type. One bad line and nothing is imported; the error names the line and the field."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--set", required=True, help="the new pair set's name")
        parser.add_argument("--description", default="")

    def handle(self, *args, **o):
        params = ImportPairsParams(path=o["file"], name=o["set"], description=o["description"])
        self.stdout.write(format_report(job_run_here(params=params).result))
