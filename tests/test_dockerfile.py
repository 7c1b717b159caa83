"""The Dockerfile and .dockerignore, checked as text (no Docker engine runs here)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, arguments = line.partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
    return instructions


def _arguments(keyword: str) -> list[str]:
    return [args for kw, args in _dockerfile_instructions() if kw == keyword]


def test_dockerfile_starts_from_python_311():
    # given the Dockerfile
    # when its base image is read
    base = _arguments("FROM")[0]
    # then it is the official Python 3.11 image
    assert base.startswith("python:3.11")


def test_dockerfile_installs_the_project_with_optional_extras():
    # given the Dockerfile
    runs = " ".join(_arguments("RUN"))
    # when its build steps are read
    # then it pip-installs the project, with an EXTRAS build argument for extras
    assert "pip install" in runs
    assert any(args.startswith("EXTRAS") for args in _arguments("ARG"))
    assert "[${EXTRAS}]" in runs


def test_dockerfile_collects_static_files_with_production_settings():
    # given the Dockerfile
    runs = _arguments("RUN")
    # when the collectstatic step is found
    step = next(args for args in runs if "collectstatic" in args)
    # then it runs non-interactively under production settings with a build-only key
    assert "python manage.py collectstatic --noinput" in step
    assert "DJANGO_SETTINGS_MODULE=config.settings.production" in step
    key = step.split("DJANGO_SECRET_KEY=", 1)[1].split()[0]
    assert key and not key.startswith("insecure")


def test_dockerfile_runs_as_a_non_root_user():
    # given the Dockerfile
    users = _arguments("USER")
    # when the last USER instruction is read
    # then the container does not run as root
    assert users, "no USER instruction"
    assert users[-1].split(":")[0] not in {"root", "0"}


def test_dockerfile_lays_out_app_and_data_directories():
    # given the Dockerfile
    env = " ".join(_arguments("ENV"))
    # when its working directory, data directory and port are read
    # then the app lives in /app, its data in /data, and it listens on 8000
    assert _arguments("WORKDIR")[-1] == "/app"
    assert "WELLCHOSEN_DATA_DIR=/data" in env
    assert "8000" in " ".join(_arguments("EXPOSE")).split()


def test_dockerfile_default_command_is_gunicorn():
    # given the Dockerfile
    command = _arguments("CMD")[-1]
    # when its default command is read
    # then it serves config.wsgi:application with gunicorn on all interfaces
    assert "gunicorn" in command
    assert "config.wsgi:application" in command
    assert "0.0.0.0:8000" in command


def test_dockerignore_keeps_local_state_out_of_the_build_context():
    # given the .dockerignore file
    patterns = {
        line.strip().removeprefix("**/").rstrip("/")
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    # when its patterns are read
    # then the virtualenv, data, VCS and generated files are excluded
    assert {".venv", "var", ".git", "__pycache__", "staticfiles", "*.pyc", ".pytest_cache"} <= patterns


def test_dockerfile_installs_wordnet_for_meteor():
    # given the image's RUN steps
    runs = " ".join(_arguments("RUN"))
    # then Debian's WordNet is installed (METEOR never downloads it at run time)
    assert "apt-get install" in runs and "wordnet-base" in runs
