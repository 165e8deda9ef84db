"""The kernel's keyrings, reached from Python through raw system calls (no keyutils needed).

  keyring-probe.py add DESCRIPTION   adds a "user" key to the caller's user keyring, prints its id
  keyring-probe.py remove ID         invalidates that key
  keyring-probe.py probe DESCRIPTION ID
      tries, as a command would, to list the session keyring, find the key, read it, add a key,
      and find its name in /proc/keys; prints one line per try: its name and errno name or "ok"
"""
import ctypes
import errno
import os
import platform
import sys

# add_key, request_key, keyctl: asm/unistd_64.h on x86-64, asm-generic/unistd.h on arm64.
NUMBERS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}
ADD_KEY, REQUEST_KEY, KEYCTL = NUMBERS[platform.machine()]
KEYCTL_GET_KEYRING_ID, KEYCTL_READ, KEYCTL_INVALIDATE = 0, 11, 21
SESSION_KEYRING, USER_KEYRING = -3, -4

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def call(*args):
    result = libc.syscall(*args)
    return (result, "ok") if result >= 0 else (result, errno.errorcode[ctypes.get_errno()])


def main(mode, *args):
    if mode == "add":
        secret = b"pleach-keyring-secret"
        serial, outcome = call(ADD_KEY, b"user", args[0].encode(), secret, len(secret), ctypes.c_int(USER_KEYRING))
        if outcome != "ok":
            sys.exit(f"add_key: {outcome}")
        print(serial)
    elif mode == "remove":
        call(KEYCTL, KEYCTL_INVALIDATE, ctypes.c_long(int(args[0])))
    else:
        description, serial = args[0].encode(), int(args[1])
        buffer = ctypes.create_string_buffer(256)
        print("session-keyring", call(KEYCTL, KEYCTL_GET_KEYRING_ID, ctypes.c_int(SESSION_KEYRING), 0)[1])
        print("request-key", call(REQUEST_KEY, b"user", description, None, 0)[1])
        print("read-key", call(KEYCTL, KEYCTL_READ, ctypes.c_long(serial), buffer, 256)[1])
        planted, outcome = call(ADD_KEY, b"user", b"planted", b"x", 1, ctypes.c_int(SESSION_KEYRING))
        print("add-key", outcome)
        if outcome == "ok":
            call(KEYCTL, KEYCTL_INVALIDATE, ctypes.c_long(planted))
        try:
            with open("/proc/keys", "rb") as table:
                print("proc-keys", "shows-key" if description in table.read() else "no-key")
        except OSError as error:
            print("proc-keys", errno.errorcode[error.errno])


main(*sys.argv[1:])
