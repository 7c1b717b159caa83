# syntax=docker/dockerfile:1
# One image for the web server and every Celery worker.
#
#   docker build -t wellchosen:latest .                        # with the model stack, CPU torch
#   docker build -t wellchosen:latest --build-arg EXTRAS= .    # web only, no model stack
#   docker build -t wellchosen:latest --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128 .  # GPU
FROM python:3.11-slim

# Optional extras from pyproject.toml ([project.optional-dependencies]), e.g. "ml".
# "ml" (the default) brings torch, sentence-transformers and onnxruntime: the workers build
# candidate pools and run evaluations with them.
ARG EXTRAS="ml"
# Where pip finds torch: the CPU build by default (PyPI's Linux torch pulls GBs of CUDA
# libraries); point it at a CUDA index for the gpu-worker's image.
ARG TORCH_INDEX_URL="https://download.pytorch.org/whl/cpu"

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    # The sources in /app win over the copy pip puts in site-packages, so BASE_DIR
    # (templates, static, staticfiles) resolves to /app for manage.py, gunicorn and celery.
    PYTHONPATH=/app \
    WELLCHOSEN_DATA_DIR=/data \
    # Models named by a Hugging Face id are cached on the data volume, shared by web and workers
    # (the user's home, /app, is not writable).
    HF_HOME=/data/huggingface \
    DJANGO_STATIC_ROOT=/app/staticfiles

WORKDIR /app

# psycopg[binary] ships its own libpq. METEOR reads WordNet 3.0 from Debian's wordnet-base
# (/usr/share/wordnet): nothing is downloaded at run time.
RUN apt-get update \
    && apt-get install -y --no-install-recommends wordnet-base \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, in their own layer: it is only rebuilt when pyproject.toml changes.
# (No packages are found yet, so this installs the dependencies and an empty distribution.)
COPY pyproject.toml README.md ./
RUN if [ -n "$EXTRAS" ]; then target=".[${EXTRAS}]"; else target="."; fi \
    && pip install --extra-index-url "$TORCH_INDEX_URL" "$target" \
    && rm -rf build ./*.egg-info

# Then the project itself.
COPY . .
RUN pip install --no-deps --force-reinstall . \
    && rm -rf build ./*.egg-info

# Static files are collected into the image (served by WhiteNoise). Production settings
# refuse a missing or "insecure..." key, so a throwaway value is used for this step only.
RUN DJANGO_SETTINGS_MODULE=config.settings.production \
    DJANGO_SECRET_KEY=build-time-only-collectstatic-not-a-real-secret \
    python manage.py collectstatic --noinput

RUN groupadd --system --gid 1000 wellchosen \
    && useradd --system --uid 1000 --gid wellchosen --home-dir /app --shell /usr/sbin/nologin wellchosen \
    && mkdir -p /data \
    && chown -R wellchosen:wellchosen /data
VOLUME ["/data"]

USER wellchosen

ENV DJANGO_SETTINGS_MODULE=config.settings.production

EXPOSE 8000

CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "120", "--access-logfile", "-"]
