# Tokens on the Sphere: the Streamlit app in one image.
#
#   docker build -t tokens-on-the-sphere .
#   docker run --rm -p 8501:8501 tokens-on-the-sphere
#   # your own parameter file, read on every rerun:
#   docker run --rm -p 8501:8501 -v "$PWD/my-params.toml:/config/params.toml:ro" \
#       -e APP_PARAMS_FILE=/config/params.toml tokens-on-the-sphere
#
# BASE must be a Debian bookworm image with python3 (3.11+), the venv module
# and useradd; `make image-check` builds it from a local Debian bookworm base
# when no registry is reachable.
# The default is pinned by digest (the multi-arch index of python:3.11-slim-bookworm
# on Docker Hub), so a rebuild gets the same base until this line is changed.
# To move to a newer base: docker buildx imagetools inspect python:3.11-slim-bookworm
# (or: skopeo inspect docker://docker.io/library/python:3.11-slim-bookworm) and
# put the new digest here; `make image-check` pulls exactly this reference
# whenever a registry answers and fails if it is gone.
ARG BASE=python:3.11-slim-bookworm@sha256:2e32f7d302adc1c37428355c1e646897c0c53f4fd60b6a551245fb90ee129f91
FROM ${BASE}

# Debian packages pinned by version (bookworm's current version; a base from
# another Debian release needs its own: apt-cache policy libgomp1).
ARG LIBGOMP1_VERSION=12.2.0-14+deb12u1

# libgomp1 gives Numba its OpenMP threading layer, which is safe when several
# sessions run parallel kernels at the same time; without it Numba falls back
# to "workqueue", which aborts the whole server on concurrent use.
# One unprivileged user owns the only writable paths: the Numba cache, HOME and the folder of the
# instructors' own lessons (APP_LESSONS_DIR; a volume mounted there starts with this owner).
RUN apt-get update \
    && apt-get install -y --no-install-recommends "libgomp1=${LIBGOMP1_VERSION}" \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --home-dir /home/app --shell /usr/sbin/nologin --uid 10001 --user-group app \
    && mkdir -p /var/cache/numba /var/lib/tokens-on-the-sphere/lessons \
    && chown app:app /var/cache/numba /var/lib/tokens-on-the-sphere/lessons

ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NUMBA_CACHE_DIR=/var/cache/numba \
    NUMBA_THREADING_LAYER=threadsafe \
    OPENBLAS_NUM_THREADS=1

# The runtime lock only (requirements.lock: every package with its hashes,
# made by `make lock`): pip refuses anything unpinned or with another hash.
# In a venv so any Debian-style base works (PEP 668).
COPY requirements.lock /app/requirements.lock
RUN python3 -m venv "$VIRTUAL_ENV" \
    && pip install --no-cache-dir --require-hashes --no-deps -r /app/requirements.lock \
    && pip check

WORKDIR /app
COPY . /app
# Bytecode compiled now: the source tree stays read-only for the app user.
RUN python -m compileall -q /app

# Warm the Numba cache as the runtime user, so the files it writes are the
# ones the server reads (a cache hit needs the same source mtime and CPU):
# kernels for the build machine's CPU, and portable ones (NUMBA_CPU_NAME=generic)
# that a replica on another CPU type loads instead of compiling everything again
# at its start (sim.warm.choose_target; about 1.5x slower: docs/deploy.md).
USER 10001:10001
RUN python scripts/warm_numba.py \
    && NUMBA_CPU_NAME=generic python scripts/warm_numba.py

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

CMD ["python", "-m", "ui.server"]
