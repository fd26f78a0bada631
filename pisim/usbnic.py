"""A simulated Pi's USB Ethernet (opt-in, SIMULATED): a relay that spends CPU on every frame.

On a Pi 3B the Ethernet is a USB chip (smsc95xx): its driver moves every frame on the Arm
cores, so the link's throughput follows the CPU clock. pisim's veth does its packet work in the
host kernel, outside the node's CPU quota; on a node with Faults(usb_nic_cycles=...) this relay
stands in between. The node's IP interface is a TAP device named eth0 (the veth end's MAC, the
node's address), the veth end (WIRE, no address, the kernel's own input on it dropped by
nftables) is the cable, and this process copies frames both ways, paying a fixed amount of its
own CPU time per frame. It runs in the node's cgroup, so its CPU time, and with it the link,
follows the node's quota, i.e. the emulated Arm clock (pisim/nodecpu.py).

Started by the node's PID 1 (pisim/boot.py) as
    python -I usbnic.py <wire> <tap> <address/prefix> <cost_ns>
It creates the TAP (gone with this process: nothing to clean up), configures it, writes
"ready" on stdout and relays until killed. Standard library only: boot.py imports it from
its own directory too (for the names below).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import select
import socket
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23  # our own sends on the wire are not frames to relay back
PR_SET_NAME = 15
PROCESS_NAME = "usbnic"  # what the node's ps and pifarm's sampler show
WIRE = "usbwire0"  # the node's end of its veth (pisim.netns makes it)
TAP = "eth0"  # the node's IP interface
MAX_FRAME = 65536
# Frames taken from one side before looking at the other: fewer poll() calls under load,
# and neither direction starves the other.
BATCH = 16
IP_TIMEOUT_S = 10


def open_tap(name: str) -> int:
    """A TAP device of this process only: the kernel removes it when the last fd closes."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


def open_wire(name: str) -> socket.socket:
    wire = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    wire.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    wire.bind((name, ETH_P_ALL))
    return wire


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, timeout=IP_TIMEOUT_S)


def configure_tap(tap: str, wire: str, address: str) -> None:
    """The TAP takes the wire's MAC (the host's permanent neighbour entry names it)."""
    with open(f"/sys/class/net/{wire}/address") as f:
        mac = f.read().strip()
    ip("link", "set", tap, "address", mac)
    ip("addr", "add", address, "dev", tap)
    ip("link", "set", tap, "up")


class Relay:
    """Copies frames between the TAP and the wire; each costs cost_ns of this thread's CPU."""

    def __init__(self, tap_fd: int, wire: socket.socket, cost_ns: int):
        self.tap_fd = tap_fd
        self.wire = wire
        self.cost_ns = cost_ns
        self.paid_until = time.thread_time_ns()

    def pay(self) -> None:
        """Busy until this thread's CPU time reaches the cost of every frame so far. CPU
        time, not wall time: while the quota holds us back, the clock of the debt stops too.
        Idle time earns no credit (this thread's CPU time does not move while it waits)."""
        self.paid_until = max(self.paid_until + self.cost_ns, time.thread_time_ns())
        while time.thread_time_ns() < self.paid_until:
            pass

    def from_tap(self) -> None:
        for _ in range(BATCH):
            try:
                frame = os.read(self.tap_fd, MAX_FRAME)
            except BlockingIOError:
                return
            self.pay()
            try:
                self.wire.send(frame)
            except OSError as exc:  # the wire's queue is full: the frame is lost, as on a NIC
                if exc.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise

    def from_wire(self) -> None:
        for _ in range(BATCH):
            try:
                frame = self.wire.recv(MAX_FRAME, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            self.pay()
            try:
                os.write(self.tap_fd, frame)
            except OSError as exc:  # the TAP is down or its queue is full: frame lost
                if exc.errno not in (errno.EIO, errno.ENOBUFS, errno.EAGAIN):
                    raise

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.tap_fd, select.POLLIN)
        poller.register(self.wire.fileno(), select.POLLIN)
        while True:
            for fd, _events in poller.poll():
                if fd == self.tap_fd:
                    self.from_tap()
                else:
                    self.from_wire()


def main(argv: list[str]) -> int:
    wire_name, tap_name, address, cost_ns = argv
    ctypes.CDLL(None).prctl(PR_SET_NAME, PROCESS_NAME.encode())
    tap_fd = open_tap(tap_name)
    wire = open_wire(wire_name)
    configure_tap(tap_name, wire_name, address)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    Relay(tap_fd, wire, int(cost_ns)).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
