from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.testset_export import testset_export
from annotation.services.testset_export_hf import testset_export_hf
from annotation.testset_io import FORMAT_FILES, FORMAT_VERSIONS
from core.errors import UserError


class Command(BaseCommand):
    help = (
        "Write a frozen test set (tsv = TSV + human_scores.jsonl, jsonl, csv) and its manifest to a directory; "
        "hf: a Hugging Face dataset folder (data/, README.md card, croissant.json, lm-eval task, manifest.json)."
    )

    def add_arguments(self, parser):
        parser.add_argument("testset", help="test set name")
        parser.add_argument(
            "--format",
            action="extend",
            nargs="+",
            choices=[*FORMAT_FILES, "hf"],
            dest="formats",
            help="one or more formats: --format tsv jsonl, or --format repeated "
            "(default: tsv, jsonl and csv; hf only when asked)",
        )
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument(
            "--csv-version",
            type=int,
            choices=range(1, FORMAT_VERSIONS["csv"] + 1),
            help=f"the CSV's format version (default {FORMAT_VERSIONS['csv']}: cells escaped for spreadsheets and "
            "a 'derived' column; 2: without that column; 1: cells as stored; older versions give the bytes of test "
            "sets built before)",
        )
        parser.add_argument(
            "--jsonl-version",
            type=int,
            choices=range(1, FORMAT_VERSIONS["jsonl"] + 1),
            help=f"the JSONL's format version (default {FORMAT_VERSIONS['jsonl']}: with each candidate's retrievers "
            "and provenance and each question's 'derived'; 2: without 'derived'; 1: without either; older versions "
            "give the bytes of test sets built before)",
        )

    def handle(self, *args, **o):
        formats = list(dict.fromkeys(o["formats"] or FORMAT_FILES))
        release_formats = [f for f in formats if f != "hf"]
        try:
            paths, notes = [], []
            if release_formats:
                export = testset_export(
                    name=o["testset"],
                    formats=release_formats,
                    out_dir=o["out"],
                    csv_version=o["csv_version"],
                    jsonl_version=o["jsonl_version"],
                )
                paths, notes = export.paths, export.notes
            if "hf" in formats:
                paths += testset_export_hf(name=o["testset"], out_dir=o["out"])
        except UserError as exc:
            raise CommandError(str(exc)) from None
        for path in paths:
            self.stdout.write(str(path))
        for note in notes:
            self.stderr.write(f"note: {note}")
