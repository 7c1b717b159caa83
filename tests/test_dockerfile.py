"""The image's build context, build steps and entry point, run here (no Docker engine runs here):
what the Dockerfile copies is what the project needs, its collectstatic step and its default
command work as written."""

import fnmatch
import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def instructions(keyword: str) -> list[str]:
    """The arguments of every ``keyword`` instruction, continuation lines joined, comments dropped."""
    found, pending = [], ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line, pending = pending + line, ""
        word, _, arguments = line.partition(" ")
        if word.upper() == keyword:
            found.append(arguments.strip())
    return found


def ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last matching pattern wins, ``!`` re-includes, a matched folder takes
    everything below it, ``**`` matches any number of folders."""
    parts = path.split("/")
    result = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pattern = pattern.removeprefix("!").strip("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            if fnmatch.fnmatchcase(prefix, pattern) or (
                pattern.startswith("**/") and fnmatch.fnmatchcase(parts[depth - 1], pattern[3:])
            ):
                result = not negate
                break
    return result


def build_context() -> set[str]:
    """The files `docker build .` sends: those in the working tree, less what .dockerignore leaves out."""
    patterns = [
        line.strip() for line in DOCKERIGNORE.read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    local_state = [".venv/bin/python", "var/wellchosen.sqlite3", ".git/HEAD", "core/__pycache__/models.cpython-311.pyc"]
    return {path for path in files + local_state if not ignored(path, patterns)}


def test_the_base_image_python_satisfies_requires_python():
    base = instructions("FROM")[0]
    version = base.split(":", 1)[1].split("-")[0]  # python:3.11-slim -> 3.11
    assert SpecifierSet(PYPROJECT["project"]["requires-python"]).contains(f"{version}.0")


def test_the_build_context_holds_every_package_and_leaves_local_state_out():
    context = build_context()
    packages = [p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]]
    for package in packages:
        assert f"{package}/__init__.py" in context, package
    for needed in (
        "manage.py",
        "pyproject.toml",
        "README.md",
        "templates/base.html",
        "annotation/demo/dialogues.jsonl",
        "testsets/demo/testset.tsv",
    ):
        assert needed in context, needed
    assert not {".venv/bin/python", "var/wellchosen.sqlite3", ".git/HEAD"} & context
    assert not any(path.endswith(".pyc") for path in context)


def test_the_collectstatic_step_runs_as_written(tmp_path):
    # given the image's collectstatic step, its environment assignments and command as written
    step = next(args for args in instructions("RUN") if "collectstatic" in args)
    words = shlex.split(step)
    env = dict(word.split("=", 1) for word in words if "=" in word and not word.startswith("-"))
    command = [word for word in words if "=" not in word or word.startswith("-")]
    assert command[:2] == ["python", "manage.py"]
    # when it runs against this checkout (static files into a folder of the test's own)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "WELLCHOSEN_", "DATABASE_"))}
    result = subprocess.run(
        [sys.executable, *command[1:]],
        cwd=REPO_ROOT,
        env={**clean, **env, "DJANGO_STATIC_ROOT": str(tmp_path / "static"), "WELLCHOSEN_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    # then it succeeds under production settings and collects the admin's and the project's files
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "static" / "admin" / "css" / "base.css").is_file()
    assert {p.name for p in (REPO_ROOT / "static").iterdir()} <= {p.name for p in (tmp_path / "static").iterdir()}


def test_the_default_command_serves_the_application(tmp_path):
    # given the image's default command (gunicorn and its arguments), under production settings
    command = json.loads(instructions("CMD")[-1])
    assert command[0] == "gunicorn"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "WELLCHOSEN_", "DATABASE_"))}
    env.update(
        DJANGO_SETTINGS_MODULE=dict(a.split("=", 1) for a in " ".join(instructions("ENV")).split() if "=" in a)[
            "DJANGO_SETTINGS_MODULE"
        ],
        DJANGO_SECRET_KEY="a-long-secret-for-the-test-only-0123456789",
        WELLCHOSEN_DATA_DIR=str(tmp_path),
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
    )
    # when gunicorn loads it (its own configuration check imports the WSGI application)
    gunicorn = Path(sys.executable).with_name("gunicorn")
    result = subprocess.run(
        [str(gunicorn), "--check-config", *command[1:]],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard: importing the application takes seconds
    )
    # then the application loads
    assert result.returncode == 0, result.stdout + result.stderr
