import json

from django.core.management.base import BaseCommand, CommandError

from core.errors import UserError
from evaluation.services.human_import import zhao_ratings_import


class Command(BaseCommand):
    help = (
        "Import human ratings of generated responses: each model of the file becomes an external system with "
        "its responses and ratings (every aspect). Re-importing the same file changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="the ratings file (zhao: DSTC10 track 5 format, dailydialog-zhao_eval.json)")
        parser.add_argument("--format", choices=["zhao"], required=True, help="file format")
        parser.add_argument("--campaign", default=None, help="put the generation systems into this campaign")
        parser.add_argument(
            "--aspect", default="appropriateness", help="aspect every item must rate (a new campaign's human score)"
        )

    def handle(self, *args, **o):
        try:
            report = zhao_ratings_import(path=o["path"], campaign_name=o["campaign"], aspect=o["aspect"])
        except UserError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(json.dumps(report, indent=2))
