"""Tells a bucketfs mount the order in which files will be read, so that it
fetches them ahead in that order (see docs/MOUNTING.md, "Read order").

    from bucketfs_order import OrderedSampler
    sampler = OrderedSampler(RandomSampler(dataset), dataset.paths, "/mnt/data")
    loader = DataLoader(dataset, sampler=sampler, num_workers=8)

The mount is told over its control socket (as `bucketfs status` is), so it
works for the user who mounted it; anything else (another filesystem, no
socket) makes announce() return False and change nothing.
"""
import os
import socket

MAX_LINE = 4000  # the control socket takes lines of up to 4096 bytes


def _control_dir():
    d = os.environ.get("BUCKETFS_CONTROL_DIR")
    if d:
        return d
    if os.getuid() == 0:
        return "/run/bucketfs"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    return f"{xdg}/bucketfs" if xdg else f"/tmp/bucketfs-{os.getuid()}"


def _escape_mountpoint(path):
    """systemd-style, as the daemon names its socket."""
    path = path.strip("/")
    if not path:
        return "-"
    out = []
    for i, b in enumerate(path.encode()):
        c = chr(b)
        if c == "/":
            out.append("-")
        elif c.isascii() and (c.isalnum() or c in "_:" or (c == "." and i > 0)):
            out.append(c)
        else:
            out.append(f"\\x{b:02x}")
    return "".join(out)


def socket_path(mountpoint):
    return os.path.join(_control_dir(), _escape_mountpoint(os.path.realpath(mountpoint)) + ".sock")


def _quote(rel):
    """Percent-encodes what would split or end a control line."""
    out = []
    for b in rel.encode():
        out.append(f"%{b:02X}" if b <= 0x20 or b in (0x25, 0x7F) else chr(b))
    return "".join(out)


def _call(sock, line):
    sock.sendall(line.encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n\n"):
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("the mount closed its control socket")
        reply += chunk
    text = reply.decode(errors="replace")
    if not text.startswith("ok\n"):
        raise RuntimeError(text.strip())
    return text[3:].strip()


def announce(mountpoint, paths):
    """Replaces the mount's read order with paths (absolute, or relative to
    the mountpoint). Returns False when the mount cannot be told."""
    root = os.path.realpath(mountpoint)
    rels = []
    for p in paths:
        p = os.fspath(p)
        rel = os.path.relpath(os.path.abspath(p), root) if os.path.isabs(p) else p
        if rel.startswith(".."):
            raise ValueError(f"{p} is not under {mountpoint}")
        rels.append(_quote(rel))
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(socket_path(mountpoint))
            _call(sock, "order reset")
            line = "order add"
            for r in rels:
                if len(line) + 1 + len(r) > MAX_LINE:
                    _call(sock, line)
                    line = "order add"
                line += " " + r
            if line != "order add":
                _call(sock, line)
    except (OSError, RuntimeError):
        return False
    return True


def status(mountpoint):
    """The mount's read-order counters: {name: int}."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(socket_path(mountpoint))
        body = _call(sock, "order status")
    return {k: int(v) for k, v in (line.split("=", 1) for line in body.splitlines() if "=" in line)}


class OrderedSampler:
    """Wraps a torch Sampler: each epoch's indices are drawn first and
    announced to the mount as paths[i], then yielded unchanged."""

    def __init__(self, sampler, paths, mountpoint):
        self.sampler, self.paths, self.mountpoint = sampler, list(paths), mountpoint

    def __iter__(self):
        order = list(iter(self.sampler))
        announce(self.mountpoint, [self.paths[i] for i in order])
        return iter(order)

    def __len__(self):
        return len(self.sampler)
