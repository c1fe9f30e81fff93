#!/bin/sh
# Run a benchmark with CPU priority over everything else on a shared machine:
#
#     sh bench/isolate.sh python bench/server.py ...
#
# The command (and the servers, Redis and load generator it starts) joins a cgroup-v1
# "cpu" group with a large cpu.shares, so other jobs' processes (other test suites,
# builds) take CPU only when the benchmark leaves some idle. Without it, on a loaded
# 2-core machine the benchmark's processes wait in the run queue (we measured 37% of
# the server's wall time there) and latencies measure the neighbours, not the server.
# Needs root and a cgroup-v1 cpu controller at /sys/fs/cgroup/cpu; elsewhere it says
# so and runs the command as is. Nothing here changes the benchmark itself.
set -e
group=/sys/fs/cgroup/cpu/giants-bench
if [ -w /sys/fs/cgroup/cpu ] || [ -d "$group" ]; then
    mkdir -p "$group" 2>/dev/null || true
    if echo 200000 > "$group/cpu.shares" 2>/dev/null && echo $$ > "$group/tasks" 2>/dev/null; then
        exec "$@"
    fi
fi
echo "bench/isolate.sh: no writable cgroup-v1 cpu controller; running without CPU priority" >&2
exec "$@"
