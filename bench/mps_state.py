#!/usr/bin/env python3
"""mps_state.py — is a CUDA Multi-Process Service (MPS) control daemon running where this
process's CUDA driver would look for it? Prints `on` or `off` (exit 0 either way).

The test is hir-run's (runner/job/shared_gpu.c, docs/runner.md): the CUDA driver connects to
the daemon's socket `control` in CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) and runs
without MPS when that fails, so MPS is on exactly when a connection there is accepted. A socket
file left by a daemon that is gone refuses it: off. The bench scripts (gpu_env.sh,
test/gpu/suite.sh) and bench/model_vs_gpu.py record the answer as "MPS: on/off".
   python3 bench/mps_state.py            # or: import mps_state; mps_state.state()
"""
import errno
import os
import socket
import sys


def pipe_directory(env=None):
    env = os.environ if env is None else env
    return env.get("CUDA_MPS_PIPE_DIRECTORY") or "/tmp/nvidia-mps"


def detect(env=None):
    path = os.path.join(pipe_directory(env), "control")
    for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):
        s = socket.socket(socket.AF_UNIX, kind)
        s.setblocking(False)
        try:
            s.connect(path)
            return True
        except BlockingIOError:          # a listener whose queue is full
            return True
        except OSError as e:
            if e.errno != errno.EPROTOTYPE:     # a socket of the other type: try it
                return False
        finally:
            s.close()
    return False


def state(env=None):
    return "on" if detect(env) else "off"


if __name__ == "__main__":
    print(state())
    sys.exit(0)
