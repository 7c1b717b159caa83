"""``make run``'s last step for real: the worker and the web server start, the address printed is the
port asked for, the logins come last, and Ctrl-C stops both."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.heavy]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.mark.parametrize(
    "stops",
    [(signal.SIGINT,), (signal.SIGTERM,), (signal.SIGTERM, signal.SIGINT)],
    ids=["ctrl-c", "sigterm", "sigterm-then-ctrl-c-while-stopping"],
)
def test_run_local_prints_the_port_asked_for_and_the_logins_last_then_stops_both(tmp_path, stops):
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "CELERY_BROKER_URL")} | {
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "WELLCHOSEN_DATA_DIR": str(tmp_path),
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True, timeout=300)
    port = free_port()
    process = subprocess.Popen(
        [*manage, "run_local", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # when it has started, it prints the block with the address and the logins, and nothing after it
        lines = []
        deadline = time.monotonic() + 240
        while not lines or "Ctrl-C stops both." not in lines[-1]:
            assert time.monotonic() < deadline and process.poll() is None, "".join(lines)
            lines.append(process.stdout.readline())
        output = "".join(lines)
        assert f"WellChosen is running at http://127.0.0.1:{port}/" in output
        assert "researcher / " in output and "annotator / " in output
        assert "8000" not in output
        # then the server answers and the worker's log says it is ready
        assert answers(f"http://127.0.0.1:{port}/healthz")
        assert " ready." in (tmp_path / "log" / "worker.log").read_text()
    finally:
        # when Ctrl-C is pressed (or make is terminated; or both, the second while it stops)
        for stop in stops:
            process.send_signal(stop)
            time.sleep(0.3)
        _, errors = process.communicate(timeout=60)
    # then both are gone: the port no longer answers and no process runs on the test's data folder
    assert process.returncode == 0 and "Traceback" not in (errors or ""), errors
    assert not answers(f"http://127.0.0.1:{port}/healthz")
    assert not [p for p in Path("/proc").glob("[0-9]*") if in_data_dir(p, tmp_path)]


def in_data_dir(proc: Path, data_dir: Path) -> bool:
    try:
        return f"WELLCHOSEN_DATA_DIR={data_dir}".encode() in (proc / "environ").read_bytes().split(b"\0")
    except OSError:
        return False
