import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError

from core.models import Job
from crowd.models import CrowdBatch


def run(*args) -> dict:
    out = StringIO()
    call_command("crowd", *args, stdout=out)
    return json.loads(out.getvalue())


def test_a_link_batch_is_created_costed_and_published_from_the_command_line(dataset):
    made = run(
        "create",
        "--dataset",
        "crowd",
        "--provider",
        "link",
        "--name",
        "cli",
        "--provider-settings",
        '{"reward": "0.50"}',
    )
    assert run("cost", str(made["batch"]))["total"] == "3.00"  # 2 units x 3 x $0.50, no fee
    assert run("publish", str(made["batch"]))["published_tasks"] == 2
    assert run("status", str(made["batch"]))["tasks"] == {"published": 2}
    assert Job.objects.get().kind == "crowd_publish"


def test_bad_settings_are_a_command_error(dataset):
    with pytest.raises(CommandError, match="reward 'abc' must be dollars"):
        run(
            "create",
            "--dataset",
            "crowd",
            "--provider",
            "mturk",
            "--name",
            "x",
            "--provider-settings",
            '{"reward": "abc"}',
        )
    assert not CrowdBatch.objects.exists()


def test_publishing_a_production_batch_without_confirmation_fails(dataset):
    made = run("create", "--dataset", "crowd", "--provider", "mturk", "--name", "p", "--production")
    with pytest.raises(CommandError, match="confirm publishing to production"):
        run("publish", str(made["batch"]))


# What manage.py reads from the whole command line before any command sees it.
DJANGO_GLOBAL_OPTIONS = {"--settings", "--pythonpath"}
OUR_APPS = {"core", "annotation", "testsets", "crowd", "retrieval", "evaluation"}


def option_strings(parser) -> set[str]:
    """Every option of a parser and of its subcommands' parsers."""
    found = set()
    for action in parser._actions:
        found.update(action.option_strings)
        for sub in (getattr(action, "choices", None) or {}).values() if hasattr(action, "add_parser") else []:
            found |= option_strings(sub)
    return found


def test_no_subcommand_of_ours_takes_an_option_manage_py_takes_first():
    clashes = {}
    for name, app in get_commands().items():
        if app in OUR_APPS:
            parser = load_command_class(app, name).create_parser("manage.py", name)
            subcommands = [a for a in parser._actions if hasattr(a, "add_parser")]
            for action in subcommands:
                for sub in action.choices.values():
                    if option_strings(sub) & DJANGO_GLOBAL_OPTIONS:
                        clashes[name] = sorted(option_strings(sub) & DJANGO_GLOBAL_OPTIONS)
    assert clashes == {}


def test_provider_settings_reach_the_command_from_the_real_command_line(tmp_path):
    # manage.py itself, as a researcher runs it: the JSON arrives at our command (and is refused
    # there, before any database is needed) instead of being taken for a settings module
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env |= {"DJANGO_SETTINGS_MODULE": "config.settings.local", "WELLCHOSEN_DATA_DIR": str(tmp_path)}
    args = ["crowd", "create", "--dataset", "d", "--provider", "link", "--name", "n", "--provider-settings", "[1]"]
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=root, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 1 and "--provider-settings must be a JSON object" in done.stderr, done.stderr


@pytest.mark.parametrize("cap", ["0", "-1", "9223372036854775808"])
def test_a_bad_cap_on_units_is_a_command_error(dataset, cap):
    with pytest.raises(CommandError, match="max_units must be a whole number from 1 to"):
        run("create", "--dataset", "crowd", "--provider", "link", "--name", "x", "--max-units", cap)
    assert not CrowdBatch.objects.exists()
