import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def tmp_path():
    """A folder of this test's own, outside pytest's base folder.

    Run as root, the embedded PostgreSQL runs as a system user, so its data folder and every folder
    above it must let that user through (config.engines opens them with o+x). pytest closes its
    /tmp/pytest-of-<user> folder again (mode 0700) whenever any pytest session starts, which would
    shut a running server out of its own data ("could not open file global/pg_control: Permission
    denied") as soon as another session starts beside this one."""
    folder = Path(tempfile.mkdtemp(prefix="wellchosen-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
