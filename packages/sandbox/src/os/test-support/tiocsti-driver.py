"""Run an argv on a fresh pseudo-terminal that is its controlling terminal, and report what the
terminal echoed. Reads {"file", "args", "env"} as JSON on stdin; writes {"output", "status"}."""
import fcntl
import json
import os
import pty
import sys
import termios

spec = json.load(sys.stdin)
master, slave = pty.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for descriptor in (0, 1, 2):
        os.dup2(slave, descriptor)
    os.close(master)
    if slave > 2:
        os.close(slave)
    os.execve(spec["file"], [spec["file"]] + spec["args"], spec["env"])
os.close(slave)
output = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    output += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(json.dumps({"output": output.decode("latin-1"), "status": status}))
