from django.core.management.base import BaseCommand

from annotation.services.demo import demo_accounts_ensure, demo_load


class Command(BaseCommand):
    help = "Load the demo data (written by the WellChosen authors) and make the demo accounts; safe to repeat."

    def add_arguments(self, parser):
        parser.add_argument("--no-accounts", action="store_true")
        parser.add_argument("--no-pools", action="store_true", help="skip retrieval (no embedding model needed)")

    def handle(self, *args, **options):
        for line in demo_load(with_pools=not options["no_pools"]):
            self.stdout.write(f"loaded {line}")
        if options["no_accounts"]:
            return
        credentials = demo_accounts_ensure()
        self.stdout.write(self.style.SUCCESS("Demo accounts:"))
        self.stdout.write(f"  researcher (admin, dashboard): researcher / {credentials['researcher']}")
        self.stdout.write(f"  annotator:                     annotator / {credentials['annotator']}")
