"""docker-compose.yml, validated by Docker Compose itself (`docker compose config`): services,
images, settings, volumes, profiles, health checks (compose_runner.py runs Compose).
The entry points and queues, checked against the code: test_entry_points.py."""

import shlex
from pathlib import Path

import pytest
import yaml

from tests.deployment.compose_runner import COMPOSE_FILE, REPO_ROOT, _command_text

APP_SERVICES = ("web", "worker", "beat", "gpu-worker", "gpu-worker-1")
ALL_SERVICES = (*APP_SERVICES, "proxy", "postgres", "redis", "elasticsearch")


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
    assert {"proxy", "web", "worker", "beat", "postgres", "redis", "elasticsearch"} <= listed


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
