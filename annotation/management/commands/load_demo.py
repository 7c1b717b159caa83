from django.core.management.base import BaseCommand

from annotation.job_params import LoadDemoParams
from annotation.services.demo import demo_accounts_ensure
from core.commands import job_run_here


class Command(BaseCommand):
    help = "Load the demo data (written by the WellChosen authors) and make the demo accounts; safe to repeat."

    def add_arguments(self, parser):
        parser.add_argument("--no-accounts", action="store_true")
        parser.add_argument("--no-pools", action="store_true", help="skip retrieval (no embedding model needed)")
        parser.add_argument(
            "--no-models", action="store_true", help="skip training the demo's toy masked LM and causal system"
        )

    def handle(self, *args, **options):
        # A job, run here: the job list shows what was loaded, with a link to the demo dataset.
        job = job_run_here(
            params=LoadDemoParams(with_pools=not options["no_pools"], with_models=not options["no_models"])
        )
        for line in job.result["loaded"]:
            self.stdout.write(f"loaded {line}")
        if options["no_accounts"]:
            return
        credentials = demo_accounts_ensure()
        self.stdout.write(self.style.SUCCESS("Demo accounts:"))
        self.stdout.write(f"  researcher (admin, dashboard): researcher / {credentials['researcher']}")
        self.stdout.write(f"  annotator:                     annotator / {credentials['annotator']}")
