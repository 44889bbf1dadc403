#!/usr/bin/env python3
"""A stand-in for systemd's notification socket (sd_notify(3)).

Usage: notify_listener.py SOCKET_PATH MOUNTPOINT OUT_FILE

Binds a datagram socket at SOCKET_PATH and appends each message to OUT_FILE
as one line (newlines inside a message become " | "). The moment a message
carries READY=1 it checks the mountpoint the way a unit ordered after the
service would use it, before anything else can happen: the mountpoint must
be a different file system than its parent (the mount) and a listing of it
must succeed; it appends "CHECK mount-answers in N ms" (how long the stat and
the listing took) or "CHECK mount-not-ready: ...".
Runs until killed.
"""
import os
import socket
import sys
import time


def check_mount(mountpoint):
    started = time.monotonic()
    try:
        st = os.stat(mountpoint)
        parent = os.stat(os.path.dirname(mountpoint.rstrip("/")) or "/")
        if st.st_dev == parent.st_dev:
            return "mount-not-ready: the mountpoint is not mounted"
        os.listdir(mountpoint)
        return f"mount-answers in {int((time.monotonic() - started) * 1000)} ms"
    except OSError as e:
        return f"mount-not-ready: {e}"


def main(argv):
    path, mountpoint, out = argv[1], argv[2], argv[3]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    os.chmod(path, 0o777)
    with open(out, "a", buffering=1) as log:
        log.write("LISTENING\n")
        while True:
            data = sock.recv(65536).decode(errors="replace")
            fields = data.split("\n")
            # The check runs before the message is logged, so a test that
            # sees READY=1 in the file also sees the check's result.
            check = check_mount(mountpoint) if "READY=1" in fields else None
            log.write("MSG " + " | ".join(fields) + "\n")
            if check:
                log.write("CHECK " + check + "\n")


if __name__ == "__main__":
    main(sys.argv)
