from django.core.management.base import BaseCommand

from annotation.job_params import LoadDemoParams
from annotation.services.demo import demo_accounts_ensure
from core.commands import job_params_arguments, job_params_from_options, job_run_here


class Command(BaseCommand):
    help = "Load the demo data (written by the WellChosen authors) and make the demo accounts; safe to repeat."

    def add_arguments(self, parser):
        parser.add_argument("--no-accounts", action="store_true")
        job_params_arguments(parser, LoadDemoParams)

    def handle(self, *args, **options):
        # A job, run here: the job list shows what was loaded, with a link to the demo dataset.
        job = job_run_here(params=job_params_from_options(LoadDemoParams, options))
        for line in job.result["loaded"]:
            self.stdout.write(f"loaded {line}")
        if options["no_accounts"]:
            return
        credentials = demo_accounts_ensure()
        self.stdout.write(self.style.SUCCESS("Demo accounts:"))
        self.stdout.write(f"  researcher (admin, dashboard): researcher / {credentials['researcher']}")
        self.stdout.write(f"  annotator:                     annotator / {credentials['annotator']}")
