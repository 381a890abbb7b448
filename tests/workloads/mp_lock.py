"""n processes doing 600 pieces of pure-Python work between them, each piece held under one
multiprocessing.Lock (a POSIX semaphore in shared memory), or under none with `none`.

Usage: python3 mp_lock.py N [lock|none]
"""
import contextlib, multiprocessing as mp, sys


def work(lock, pieces):
    for _ in range(pieces):
        with lock:
            s = 0
            for i in range(40000):
                s += i * i % 7


if __name__ == "__main__":
    n = int(sys.argv[1])
    lock = contextlib.nullcontext() if sys.argv[2:] == ["none"] else mp.Lock()
    ps = [mp.Process(target=work, args=(lock, 600 // n)) for _ in range(n)]
    [p.start() for p in ps]
    [p.join() for p in ps]
