#!/usr/bin/env bash
# mps-control-standin.sh — stands for nvidia-cuda-mps-control in gpu-env-mps.test (the test
# machines have no GPU and must not start MPS): bench/gpu_env.sh runs it through MPS_CONTROL.
# Every call appends its arguments (and, without -d, the command it read) to $STANDIN_LOG.
#   STANDIN=listen  -d: a process listens on $CUDA_MPS_PIPE_DIRECTORY/control as the daemon
#                   does (it ends by itself after 60 s, so a failed test leaves nothing behind)
#   STANDIN=mute    -d: exits 0 and nothing listens
#   STANDIN=fail    -d: exits 1
# Without -d: reads one command; "quit" ends the listener and removes its socket.
echo "args: $* pipe=${CUDA_MPS_PIPE_DIRECTORY:-unset} log=${CUDA_MPS_LOG_DIRECTORY:-unset}" >> "$STANDIN_LOG"
sock=$CUDA_MPS_PIPE_DIRECTORY/control
if [ "${1:-}" = -d ]; then
  case ${STANDIN:-listen} in
    fail) exit 1 ;;
    mute) exit 0 ;;
  esac
  python3 - "$sock" < /dev/null > /dev/null 2>&1 <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(8)
with open(sys.argv[1] + ".pid", "w") as f:
    f.write(str(os.getpid()))
s.settimeout(0.2)
end = time.time() + 60
while time.time() < end:
    try:
        s.accept()[0].close()
    except socket.timeout:
        pass
PY
  exit 0
fi
read -r cmd
echo "command: $cmd" >> "$STANDIN_LOG"
if [ "$cmd" = quit ] && [ -f "$sock.pid" ]; then
  kill "$(cat "$sock.pid")" 2>/dev/null
  rm -f "$sock" "$sock.pid"
fi
