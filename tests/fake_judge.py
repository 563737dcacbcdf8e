#!/usr/bin/env python3
"""fake_judge.py - speaks the kit's judge protocol (common/lib/kit_proto.h)
to a lab's worker, to see what the worker does with host memory and with
descriptors it is handed (tests/96-judge.bats). Needs no GPU.

    fake_judge.py WORKER SCENARIO

Scenarios (each prints what it saw, one fact a line, and exits 0):
    host-map       a sealed memfd handed over as a host buffer, then let go
    map-without-fd a host buffer described with no descriptor
    fd-on-call     a descriptor on a message that takes none
"""
import array
import os
import socket
import struct
import subprocess
import sys

MAGIC = 0x6B69744A
HELLO, DEVICE, MAP, CALL, LAUNCH, SETATTR, RETURN, BYE = range(1, 9)
MAP_GPU, MAP_RELEASE, MAP_HOST = 0, 1, 2
HEAD = struct.Struct("<5I")


def send(sock, kind, a=0, b=0, payload=b"", fd=None):
    data = HEAD.pack(MAGIC, kind, a, b, len(payload)) + payload
    if fd is None:
        sock.sendmsg([data])
    else:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])


def recv(sock):
    data = sock.recv(HEAD.size + 65536)
    if not data:
        return None
    magic, kind, a, b, length = HEAD.unpack_from(data)
    if magic != MAGIC or length != len(data) - HEAD.size:
        raise SystemExit("the worker sent something that is not a message")
    return kind, a, b, data[HEAD.size:]


def sealed_memfd(size):
    fd = os.memfd_create("fake-judge", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    import fcntl
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    return fd


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    worker, scenario = sys.argv[1], sys.argv[2]
    judge, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    # The worker's end on its descriptor 3, as the judge gives it; Python's
    # other descriptors close on exec.
    def give_socket():
        if theirs.fileno() == 3:
            os.set_inheritable(3, True)
        else:
            os.dup2(theirs.fileno(), 3)

    proc = subprocess.Popen([worker], close_fds=False, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, preexec_fn=give_socket)
    theirs.close()
    judge.settimeout(60)
    hello = recv(judge)
    print("hello:", "yes" if hello and hello[0] == HELLO else "no")
    size = (1 << 20) + 12
    if scenario == "host-map":
        fd = sealed_memfd(size)
        os.pwrite(fd, b"kit!", 0)
        send(judge, MAP, 7, MAP_HOST, struct.pack("<Q", size), fd)
        os.close(fd)
        m = recv(judge)
        print("mapped:", "yes" if m and m[0] == RETURN and m[1] == 0 else "no")
        send(judge, MAP, 7, MAP_RELEASE)
        m = recv(judge)
        print("released:", "yes" if m and m[0] == RETURN and m[1] == 0 else "no")
        send(judge, BYE)
    elif scenario == "map-without-fd":
        send(judge, MAP, 7, MAP_HOST, struct.pack("<Q", size))
    elif scenario == "fd-on-call":
        fd = sealed_memfd(size)
        send(judge, CALL, 2, 0, b"", fd)
        os.close(fd)
    else:
        raise SystemExit("no scenario " + scenario)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    print("worker-exit:", proc.returncode)
    print("worker-said:", out.decode(errors="replace").strip().replace("\n", " | "))


if __name__ == "__main__":
    main()
