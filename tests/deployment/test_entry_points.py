"""docker-compose.yml's entry points and queues, checked against the code: every job kind reaches a
worker's queue, the web service migrates and serves, beat and the worker agree on intervals."""

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import yaml

from tests.deployment.compose_runner import REPO_ROOT, _command_text


def _queues_consumed(services: dict) -> set[str]:
    queues = set()
    for service in services.values():
        words = shlex.split(_command_text(service.get("command") or ""))
        if words[:4] == ["celery", "-A", "config", "worker"] and "-Q" in words:
            queues |= set(words[words.index("-Q") + 1].split(","))
    return queues


def _queues_sent_to(environment: dict) -> set[str]:
    """Where the web server sends each registered job kind, with this environment."""
    from django.conf import settings

    from core.job_registry import job_kinds_all

    gpu = environment.get("WELLCHOSEN_GPU_QUEUE", "gpu")
    return {gpu if kind.queue == "gpu" else settings.CELERY_TASK_DEFAULT_QUEUE for kind in job_kinds_all()}


def test_every_job_kind_goes_to_a_queue_that_a_worker_consumes(services):
    # given the default profile (no GPU worker): the web server's environment and the workers there
    default_profile = {name: s for name, s in services.items() if not name.startswith("gpu-worker")}
    # then every job kind the apps register, and beat's periodic tasks, reach a worker
    assert _queues_sent_to(services["web"]["environment"]) <= _queues_consumed(default_profile)
    assert "default" in _queues_consumed(default_profile)


def test_with_the_gpu_profile_and_its_queue_every_job_kind_reaches_a_worker(compose):
    # given the gpu profile, with WELLCHOSEN_GPU_QUEUE=gpu as the compose file's header says
    compose.env["WELLCHOSEN_GPU_QUEUE"] = "gpu"
    try:
        result = compose.run("--profile", "gpu", "config")
    finally:
        del compose.env["WELLCHOSEN_GPU_QUEUE"]
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    # then GPU work goes to the gpu worker, which takes one task at a time (one model in memory)
    assert _queues_sent_to(services["web"]["environment"]) <= _queues_consumed(services)
    gpu_worker = shlex.split(_command_text(services["gpu-worker"]["command"]))
    assert gpu_worker[gpu_worker.index("-Q") + 1] == "gpu" and "--concurrency=1" in gpu_worker


def test_the_web_service_migrates_then_serves_an_application_that_loads(services, tmp_path):
    # given the web service's command: manage.py steps, then gunicorn
    from django.core.management import get_commands

    command = services["web"]["command"]
    script = (command if isinstance(command, list) else shlex.split(command))[-1]  # sh -c "..."
    steps = [shlex.split(step.strip().removeprefix("exec ")) for step in script.split("&&")]
    assert [step[0] for step in steps] == ["python", "gunicorn"]
    # then its management command exists, and gunicorn loads the application it names
    assert steps[0][1:3] == ["manage.py", "migrate"] and "migrate" in get_commands()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "WELLCHOSEN_", "DATABASE_"))}
    env.update(
        DJANGO_SETTINGS_MODULE=services["web"]["environment"]["DJANGO_SETTINGS_MODULE"],
        DJANGO_SECRET_KEY=services["web"]["environment"]["DJANGO_SECRET_KEY"],
        WELLCHOSEN_DATA_DIR=str(tmp_path),
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
    )
    gunicorn = Path(shutil.which("gunicorn", path=str(Path(os.sys.executable).parent)))
    result = subprocess.run(
        [str(gunicorn), "--check-config", *steps[1][1:]], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_beat_and_the_worker_agree_on_the_crowd_sync_interval(services):
    from config.settings.base import WELLCHOSEN_CROWD_SYNC_SECONDS

    intervals = {services[name]["environment"]["WELLCHOSEN_CROWD_SYNC_SECONDS"] for name in ("beat", "worker")}
    assert intervals == {str(WELLCHOSEN_CROWD_SYNC_SECONDS)}
