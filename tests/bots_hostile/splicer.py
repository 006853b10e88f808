"""A bot that holds one of its pipes' locks for ever (for tests/test_stall_play.py).

`stdout`: a thread splices from an empty Unix socket into stdout, right after sending the hello
answer through that socket; the splice waits with the stdout pipe's lock held, so the arena's
read of the answer waits in the kernel. `stdin`: after answering hello itself, a thread splices
from stdin into a full socket; the arena's next write of a line waits on the stdin pipe's lock.
Neither lets go: only ending the bot frees the arena.
"""

import os
import socket
import sys
import threading
import time

mode = sys.argv[1]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
if mode == "stdout":
    def splicer() -> None:
        while True:  # moves what is there, then waits on the empty socket, lock held
            os.splice(a.fileno(), 1, 65536)

    threading.Thread(target=splicer, daemon=True).start()
    sys.stdin.readline()
    b.send(b"hello name=splicer\n")
else:
    a.setblocking(False)
    try:
        while True:
            a.send(b"x" * 65536)  # full: a splice into it waits for room
    except BlockingIOError:
        pass
    a.setblocking(True)
    sys.stdin.buffer.raw.readline()
    os.write(1, b"hello name=splicer\n")
    threading.Thread(target=lambda: os.splice(0, a.fileno(), 65536), daemon=True).start()
while True:
    time.sleep(1000)
