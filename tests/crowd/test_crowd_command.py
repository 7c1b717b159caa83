import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.models import Job
from crowd.models import CrowdBatch


def run(*args) -> dict:
    out = StringIO()
    call_command("crowd", *args, stdout=out)
    return json.loads(out.getvalue())


def test_a_link_batch_is_created_costed_and_published_from_the_command_line(dataset):
    made = run(
        "create", "--dataset", "crowd", "--provider", "link", "--name", "cli", "--settings", '{"reward": "0.50"}'
    )
    assert run("cost", str(made["batch"]))["total"] == "3.00"  # 2 units x 3 x $0.50, no fee
    assert run("publish", str(made["batch"]))["published_tasks"] == 2
    assert run("status", str(made["batch"]))["tasks"] == {"published": 2}
    assert Job.objects.get().kind == "crowd_publish"


def test_bad_settings_are_a_command_error(dataset):
    with pytest.raises(CommandError, match="reward 'abc' must be dollars"):
        run("create", "--dataset", "crowd", "--provider", "mturk", "--name", "x", "--settings", '{"reward": "abc"}')
    assert not CrowdBatch.objects.exists()


def test_publishing_a_production_batch_without_confirmation_fails(dataset):
    made = run("create", "--dataset", "crowd", "--provider", "mturk", "--name", "p", "--production")
    with pytest.raises(CommandError, match="confirm publishing to production"):
        run("publish", str(made["batch"]))
