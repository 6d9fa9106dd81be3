#!/usr/bin/env python3
"""Run a command with its stdout and stderr on a pseudo-terminal and print what it wrote, with
carriage returns and escape sequences made visible (<CR>, <ESC>), so FileCheck can see a
progress line that a terminal would overwrite. Exits with the command's status."""
import os
import pty
import sys

pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:          # EIO: the other side is closed
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
text = out.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "<CR>").replace("\x1b", "<ESC>")
sys.stdout.write(text)
sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8)
