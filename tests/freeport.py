#!/usr/bin/env python3
"""A TCP port for a test's server: one that is free now and that nothing else is handed.

Asking the kernel for port 0 gives a port of the ephemeral range, which it also hands to every
outgoing connection on the machine: between the test's check and the server's bind, a Kafka
client or a container's connection can take it (CI once saw outboxd's HTTP port "already in
use" that way). A port below the ephemeral range is only ever taken by a bind that names it, so
a random one, checked free on every address outboxd binds (:: and 127.0.0.1), stays free.

Run as a program, prints one port (scripts/stack uses it).
"""
import random
import socket


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port):
    """Whether @port binds on 127.0.0.1 and on :: (dual stack where the machine has IPv6)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))
    except OSError:
        return False
    try:
        s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    except OSError:
        return True  # no IPv6 on this machine: 127.0.0.1 is all there is
    with s6:
        try:
            s6.bind(("::", port))
        except OSError:
            return False
    return True


def free_port():
    """A port below the ephemeral range, free on 127.0.0.1 and :: a moment ago."""
    high = min(_ephemeral_low(), 65536) - 1
    low = 10000 if high > 12000 else 1024
    rng = random.SystemRandom()
    for _ in range(200):
        p = rng.randint(low, high)
        if _bindable(p):
            return p
    raise RuntimeError(f"no free TCP port in {low}-{high} after 200 tries")


if __name__ == "__main__":
    print(free_port())
