#!/usr/bin/env bash
# Run a command with every core kept busy by a CPU hog at normal priority, as the suite must pass:
#   scripts/with_hogs.sh make test        (make test-loaded does exactly this)
# HOGS (default: the core count) busy loops run for the whole command and are stopped when it ends,
# whatever its exit status; the hogs' own CPU time is printed at the end.
set -uo pipefail
n=${HOGS:-$(nproc)}
pids=()
for _ in $(seq "$n"); do
    python3 -c 'while True: pass' &
    pids+=($!)
done
stop() { kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; }
trap stop EXIT INT TERM
echo "with_hogs: $n CPU hogs (pids ${pids[*]}) while: $*" >&2
"$@"
rc=$?
echo "with_hogs: command exited $rc; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit $rc
