#!/bin/sh
# Starts hir-reduce on $2 with reduce-hang.sh, sends it SIGTERM once the command hangs, and
# says what is left: hir-reduce's exit status, whether the command and its child still run,
# what is in the temporary folder. $1: a scratch folder.
t=$1
mkdir -p "$t/state" "$t/tmp"
TMPDIR="$t/tmp" hir-reduce -o "$t/out.hir" "$2" "$(dirname "$0")/reduce-hang.sh" "$t/state" 2> "$t/err" &
rp=$!
i=0
while [ ! -s "$t/state/pid" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $rp
wait $rp
echo "rc=$?"
sleep 0.2
# running: the process exists and is no zombie (a container's init may not reap orphans)
running() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat"; }
running "$(cat "$t/state/pid")" && echo "command: running" || echo "command: gone"
running "$(cat "$t/state/child")" && echo "child: running" || echo "child: gone"
echo "temporary files: $(ls -A "$t/tmp" | wc -l)"
