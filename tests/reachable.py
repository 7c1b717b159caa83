"""Whether a real service answers, so that tests using it can skip with a message when it does not."""

import socket

REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379


def redis_reachable() -> bool:
    try:
        with socket.create_connection((REDIS_HOST, REDIS_PORT), timeout=1):
            return True
    except OSError:
        return False
