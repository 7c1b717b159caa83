import sys

from django.core.management.base import BaseCommand, CommandError

from pairs.models import PairSet
from pairs.services.transfer import pairs_export


class Command(BaseCommand):
    help = "Export a pair set as JSON lines (the format import_pairs reads), in pair order."

    def add_arguments(self, parser):
        parser.add_argument("--set", required=True)
        parser.add_argument("--out", default="-", help="file to write (default: standard output)")
        parser.add_argument("--accepted-only", action="store_true", help="only the pairs a reviewer accepted")

    def handle(self, *args, **o):
        pair_set = PairSet.objects.filter(name=o["set"]).first()
        if pair_set is None:
            raise CommandError(f"no pair set {o['set']!r}")
        if o["out"] == "-":
            count = pairs_export(pair_set=pair_set, out=sys.stdout, accepted_only=o["accepted_only"])
        else:
            with open(o["out"], "w", encoding="utf-8") as out:
                count = pairs_export(pair_set=pair_set, out=out, accepted_only=o["accepted_only"])
        self.stderr.write(f"{count} pairs")
