from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import UserError
from testsets.formats.registry import EXPORT_FILES, FORMATS, default_formats
from testsets.services.export import testset_export


class Command(BaseCommand):
    help = (
        "Write a frozen test set (tsv = TSV + human_scores.jsonl, jsonl, csv) and its manifest to a directory; "
        "hf: a Hugging Face dataset folder (data/, README.md card, croissant.json, lm-eval task, manifest.json)."
    )

    def add_arguments(self, parser):
        defaults = default_formats()
        asked_only = [name for name in FORMATS if name not in defaults]
        parser.add_argument("testset", help="test set name")
        parser.add_argument(
            "--format",
            action="extend",
            nargs="+",
            choices=list(FORMATS),
            dest="formats",
            help="one or more formats: --format tsv jsonl, or --format repeated "
            f"(default: {', '.join(defaults[:-1])} and {defaults[-1]}; {', '.join(asked_only)} only when asked)",
        )
        parser.add_argument("--out", type=Path, required=True)
        csv, jsonl = EXPORT_FILES["csv"].version, EXPORT_FILES["jsonl"].version
        parser.add_argument(
            "--csv-version",
            type=int,
            choices=range(1, csv + 1),
            help=f"the CSV's format version (default {csv}: cells escaped for spreadsheets and "
            "a 'derived' column; 2: without that column; 1: cells as stored; older versions give the bytes of test "
            "sets built before)",
        )
        parser.add_argument(
            "--jsonl-version",
            type=int,
            choices=range(1, jsonl + 1),
            help=f"the JSONL's format version (default {jsonl}: with each candidate's retrievers "
            "and provenance and each question's 'derived'; 2: without 'derived'; 1: without either; older versions "
            "give the bytes of test sets built before)",
        )

        parser.add_argument(
            "--original-text",
            action="store_true",
            help="also write each file that carries texts with the texts as imported, where a normaliser "
            "changed them (<name>.original.tsv, ...; the manifest records only the others)",
        )

    def handle(self, *args, **o):
        try:
            export = testset_export(
                name=o["testset"],
                formats=list(dict.fromkeys(o["formats"] or default_formats())),
                out_dir=o["out"],
                csv_version=o["csv_version"],
                jsonl_version=o["jsonl_version"],
                original_text=o["original_text"],
            )
        except UserError as exc:
            raise CommandError(str(exc)) from None
        for path in export.paths:
            self.stdout.write(str(path))
        for note in export.notes:
            self.stderr.write(f"note: {note}")
