"""Fault injection settings of a simulated Pi."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

# Pi CPU cycles a Pi 3B's smsc95xx USB Ethernet costs per frame, SIMULATED and calibrated on
# pisim (not measured on a Pi): with it a pi3b-legacy node pushes about half of its 100 Mbit/s
# at arm_freq 600 and nearly the line at 1200 (see pisim/README.md, "A USB Ethernet").
SMSC95XX_CYCLES_PER_FRAME = 110_000


@dataclass
class Faults:
    """What goes wrong with a node.

    max_boot_arm_freq: the node hangs at boot when the booted arm_freq is above this (a bad
        overclock). A hang during a tryboot is reset by the watchdog after watchdog_timeout
        seconds when watchdog=True, and the board then boots config.txt (yaml: tryboot.caveat).
    throttled_after_boot: get_throttled value reported after each boot (e.g. 0x50005).
    sshd_restart_delay: seconds before sshd is back after kill_sshd() or an sshd crash.
    hostile: traits of a hostile board ("markup", "binary", "huge", "flood"; see pisim.hostile).
    reported_config_path: the path the node's login shell reports for config.txt to pifarm's
        probe instead of the real one (e.g. "-delete/config.txt").
    Both are read when the node is created; set_faults() does not change them.
    banner_delay: for this many seconds after each boot, the node accepts TCP on port 22 at
        once but sends nothing; then sshd's banner flows on every connection still open (a
        board whose sshd is slow to start talking).
    close_after_banner: for this many seconds after each boot (after banner_delay, if both
        are set), each connection gets sshd's banner and is then closed, before any key
        exchange; float("inf") for always.
    With either set, port 22 is a relay in the node's PID 1 in front of an sshd on the
    node's loopback (for that boot): TCP is accepted even while sshd is down (then closed).
    missing_tools: commands the node lacks (e.g. ("sysbench", "fio")): each boot whites their
        names out of every directory on the node's PATH (an overlay), so `command -v` finds
        none; the node's simulated apt-get (nodebin/apt_get.py) brings back those of the
        packages it "installs", and they stay installed across reboots.
    usb_nic_cycles: 0 (default): eth0 is the veth, its packet work free for the node. Else
        eth0 is a USB Ethernet (pisim/usbnic.py) whose relay spends this many Pi CPU cycles
        per frame inside the node's CPU quota (SMSC95XX_CYCLES_PER_FRAME for a Pi 3B), so
        the link follows the emulated clock. Read when the node is created, like hostile.
    slower_after_s: None (default), or seconds after each boot from which the node gets only
        slower_share of its CPU quota, as a board does whose heatsink fell off or whose SD
        card wears: it becomes slower with nothing it reports changing (the clock, the
        throttled bits and the temperature read as before). A drift for pifarm's canaries.
    """

    max_boot_arm_freq: int | None = None
    watchdog: bool = True
    watchdog_timeout: float = 3.0
    throttled_after_boot: int | None = None
    sshd_restart_delay: float = 1.0
    hostile: tuple[str, ...] = ()
    reported_config_path: str | None = None
    banner_delay: float = 0.0
    close_after_banner: float = 0.0
    missing_tools: tuple[str, ...] = ()
    usb_nic_cycles: int = 0
    slower_after_s: float | None = None
    slower_share: float = 0.8

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> Faults:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in names})
