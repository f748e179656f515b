# Tokens on the Sphere: the Streamlit app in one image.
#
#   docker build -t tokens-on-the-sphere .
#   docker run --rm -p 8501:8501 tokens-on-the-sphere
#   # your own parameter file, read on every rerun:
#   docker run --rm -p 8501:8501 -v "$PWD/my-params.toml:/config/params.toml:ro" \
#       -e APP_PARAMS_FILE=/config/params.toml tokens-on-the-sphere
#
# BASE must be a Debian-like image with python3 (3.11+), the venv module and
# useradd; `make image-check` builds it from a local Debian base when no
# registry is reachable.
ARG BASE=python:3.11-slim
FROM ${BASE}

# libgomp1 gives Numba its OpenMP threading layer, which is safe when several
# sessions run parallel kernels at the same time; without it Numba falls back
# to "workqueue", which aborts the whole server on concurrent use.
# One unprivileged user owns the only writable paths: the Numba cache and HOME.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --home-dir /home/app --shell /usr/sbin/nologin --uid 10001 --user-group app \
    && mkdir -p /var/cache/numba \
    && chown app:app /var/cache/numba

ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NUMBA_CACHE_DIR=/var/cache/numba \
    NUMBA_THREADING_LAYER=threadsafe

# Pinned runtime requirements only (requirements.txt), in a venv so any
# Debian-style base works (PEP 668).
COPY requirements.txt /app/requirements.txt
RUN python3 -m venv "$VIRTUAL_ENV" \
    && pip install --no-cache-dir -r /app/requirements.txt

WORKDIR /app
COPY . /app
# Bytecode compiled now: the source tree stays read-only for the app user.
RUN python -m compileall -q /app

# Warm the Numba cache as the runtime user, so the files it writes are the
# ones the server reads (a cache hit needs the same source mtime and CPU).
USER 10001:10001
RUN python scripts/warm_numba.py

# The same server settings as `make run`; environment variables override
# .streamlit/config.toml and can themselves be overridden with `docker run -e`.
ENV STREAMLIT_SERVER_ADDRESS=0.0.0.0 \
    STREAMLIT_SERVER_PORT=8501 \
    STREAMLIT_SERVER_HEADLESS=true \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

EXPOSE 8501

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('STREAMLIT_SERVER_PORT', '8501'); sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/_stcore/health', timeout=4).status == 200 else 1)"]

CMD ["python", "-m", "ui.serve"]
