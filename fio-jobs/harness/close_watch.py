"""CloseWatch: when the last file written in a directory was closed.

The harness times a write job from the first job's start to the moment its
files are closed (close() returned: for the mounts the upload is complete,
fsync and flush included), because fio's own exit after that is fio's time,
not the file system's, and the direct client's timer leaves its exit out too.

Linux inotify (IN_CLOSE_WRITE is raised by the local VFS when the last
reference to a file opened for writing goes, right after the file system's
flush), read on a thread that stamps each event as it arrives. Python 3
standard library only (ctypes).
"""
import ctypes
import ctypes.util
import errno
import os
import select
import struct
import threading
import time

IN_CLOSE_WRITE = 0x00000008
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)


class CloseWatch:
    """Stamps (time.time_ns()) every close of a file opened for writing in
    `directory` between start() and stop(). Without inotify (another OS, a
    file system that raises no events) `last_close_ns()` stays None and the
    caller keeps its own end time."""

    def __init__(self, directory):
        self.directory = directory
        self.closes = {}  # name -> ns of its last close
        self.error = None
        self._fd = -1
        self._wake = None  # a pipe: stop() writes to it so the thread ends at once
        self._thread = None

    def start(self):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if fd < 0:
            self.error = os.strerror(ctypes.get_errno())
            return self
        if libc.inotify_add_watch(fd, os.fsencode(self.directory), IN_CLOSE_WRITE) < 0:
            self.error = os.strerror(ctypes.get_errno())
            os.close(fd)
            return self
        self._fd = fd
        self._wake = os.pipe()
        self._thread = threading.Thread(target=self._run, name="close-watch", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._wake[0], select.POLLIN)
        while True:
            ready = dict(poller.poll())
            now = time.time_ns()
            self._drain(now)  # on stop(): the closes queued before it, if any
            if self._wake[0] in ready:
                return

    def _drain(self, now):
        try:
            data = os.read(self._fd, 64 * 1024)
        except BlockingIOError:
            return
        except OSError as e:
            if e.errno != errno.EINTR:
                self.error = str(e)
            return
        off = 0
        while off + _EVENT.size <= len(data):
            _, mask, _, n = _EVENT.unpack_from(data, off)
            name = data[off + _EVENT.size:off + _EVENT.size + n].rstrip(b"\0").decode(
                errors="replace")
            off += _EVENT.size + n
            if mask & IN_CLOSE_WRITE:
                self.closes[name] = now

    def stop(self):
        """Ends the watch (events already queued are read first)."""
        if self._thread:
            os.write(self._wake[1], b"x")
            self._thread.join()
            for fd in self._wake:
                os.close(fd)
            self._thread = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        return self

    def last_close_ns(self):
        return max(self.closes.values()) if self.closes else None
