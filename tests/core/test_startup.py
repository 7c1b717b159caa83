"""Every management command and worker process loads all apps, their admins and URLs first: the
heavy numeric libraries stay out of that start-up and are imported by the code that uses them."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy", "torch", "transformers", "sentence_transformers", "sklearn")

PROBE = """
import sys, django
from django.core.management import call_command
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns  # every app's views and the admin
call_command("check", verbosity=0)
print("HEAVY:" + " ".join(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def test_setup_urls_and_admin_import_no_heavy_library():
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard: importing every app takes seconds
        env={"DJANGO_SETTINGS_MODULE": "config.settings.test", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "HEAVY:"
