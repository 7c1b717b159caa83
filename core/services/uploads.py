"""Uploaded import files are stored under the data directory for the worker to read."""

import uuid
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.text import get_valid_filename


def upload_store(*, uploaded: UploadedFile) -> Path:
    """Write the upload to ``WELLCHOSEN_UPLOAD_DIR/<uuid>/<name>`` in chunks; return its path.

    The original file name is kept (sanitised): imports record it as the source of
    every context and utterance.
    """
    folder = Path(settings.WELLCHOSEN_UPLOAD_DIR) / uuid.uuid4().hex
    folder.mkdir(parents=True, exist_ok=False)
    target = folder / get_valid_filename(Path(uploaded.name or "upload").name)
    with open(target, "wb") as handle:
        for chunk in uploaded.chunks():
            handle.write(chunk)
    return target
