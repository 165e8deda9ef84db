"""Listens on the Unix socket path argv[1], printing "ready", then each connection's bytes as a line.

Run by the network attacks inside a network namespace of its own (unshare), so that the socket is
not in the host namespace's /proc/net/unix.
"""
import socket
import sys

server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
server.listen(8)
print("ready", flush=True)
while True:
    client, _ = server.accept()
    data = b""
    while True:
        chunk = client.recv(100)
        if not chunk:
            break
        data += chunk
    client.close()
    print(data.decode() or "-", flush=True)
