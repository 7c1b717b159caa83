"""Recording the Celery messages a module sends, instead of reaching a broker."""


def task_sends_recorded(monkeypatch, module) -> list[tuple[str, str, list]]:
    """Each task that ``module`` sends through its ``import_string``: ``(task path, queue, args)``."""
    sent = []

    class Task:
        def __init__(self, path):
            self.path = path

        def apply_async(self, *, args, queue):
            sent.append((self.path, queue, args))

    monkeypatch.setattr(module, "import_string", Task)
    return sent
