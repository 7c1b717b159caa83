"""The fixtures of the deployment tests: Docker Compose and the file as it normalises it."""

from tests.deployment.compose_runner import compose, normalised, services  # noqa: F401
