"""python -m pisim up|status|down|build-root|supervise"""

from __future__ import annotations

import argparse
import json
import sys
import time

from . import rootfs
from .farm import Farm, cleanup_all, list_farms, stop_supervisor, teardown_farm
from .faults import Faults
from .profiles import PROFILES
from .util import RUN_ROOT, PisimError


def cmd_up(args) -> int:
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown or not profiles:
        print(f"unknown profile(s) {unknown}; known: {', '.join(PROFILES)}", file=sys.stderr)
        return 2
    try:
        slower = _slower(args.slower)
    except ValueError as exc:
        print(f"pisim up: --slower {exc}", file=sys.stderr)
        return 2
    farm = Farm(args.name, args.subnet_index, args.downtime)
    try:
        if any(PROFILES[p].userland for p in profiles[: args.nodes]):
            # The first 32-bit node builds their root unless it is cached: say so meanwhile.
            rootfs.ensure_root(say=lambda line: print(line, file=sys.stderr))
        for i in range(args.nodes):
            name = f"node{i + 1}"
            farm.add_node(name, profile=profiles[i % len(profiles)], faults=slower.get(name))
        farm.start(detach=True)
    except PisimError as exc:
        print(f"pisim up: {exc}", file=sys.stderr)
        return 1
    doc = farm.describe()
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"farm {farm.name} up (simulated Raspberry Pis), details in {farm.dir}/farm.json")
        for n in doc["nodes"]:
            print(
                f"  {n['name']:<8} {n['profile']:<16} {n['user']}@{n['host']}:{n['port']}  "
                f"key {n['private_key_path']}  host key {n['host_key_fingerprint']}"
            )
    return 0


def _slower(values: list[str]) -> dict[str, Faults]:
    """--slower NODE:SECONDS:SHARE, as many as given: Faults.slower_after_s and slower_share."""
    found = {}
    for value in values:
        name, _, rest = value.partition(":")
        seconds, _, share = rest.partition(":")
        try:
            faults = Faults(slower_after_s=float(seconds), slower_share=float(share or 0.8))
        except ValueError:
            raise ValueError(
                f"is NODE:SECONDS[:SHARE], e.g. node2:300:0.6, not {value!r}"
            ) from None
        if not 0 < faults.slower_share <= 1 or faults.slower_after_s < 0:
            raise ValueError(f"needs SECONDS >= 0 and 0 < SHARE <= 1, not {value!r}")
        found[name] = faults
    return found


def cmd_status(args) -> int:
    names = [args.name] if args.name else list_farms()
    if not names:
        print("no pisim farm")
    for name in names:
        try:
            farm = Farm.attach(name)
        except PisimError as exc:
            print(exc)
            continue
        print(
            f"farm {name}: 10.213.{farm.subnet_index}.0/24, supervisor "
            f"{'running' if farm.started else 'NOT running'}"
        )
        for node in farm.nodes.values():
            reach = "ssh ok" if node.accepts_tcp(0.3) else "no ssh"
            print(
                f"  {node.name:<8} {node.info['profile']:<16} {node.host:<14} "
                f"{node.state:<8} boot_count={node.boot_count} {reach} {cpu_quota(node)}"
            )
    return 0


def cpu_quota(node) -> str:
    """The node's simulated CPU share in words (pisim.nodecpu)."""
    quota = node.cpu_quota
    if quota.get("mode") in ("v1", "v2"):
        return f"cpu quota {quota['mode']} (simulated, {quota.get('mhz', '?')} MHz)"
    if quota.get("mode") == "none":
        return f"cpu quota none, unthrottled: {quota.get('note')}"
    return "cpu quota -"  # not booted (yet)


def cmd_down(args) -> int:
    if args.all:
        removed = cleanup_all()
        print(f"removed: {', '.join(removed) or 'nothing'}")
        return 0
    stop_supervisor(RUN_ROOT / args.name)
    teardown_farm(args.name)
    print(f"farm {args.name} down")
    return 0


def cmd_build_root(_args) -> int:
    """The i386 root of the 32-bit nodes (pisim.rootfs), built now if it is not cached."""
    started = time.monotonic()
    try:
        root = rootfs.ensure_root(say=print)
    except PisimError as exc:
        print(f"pisim build-root: {exc}", file=sys.stderr)
        return 1
    print(f"{rootfs.ARCH} root ready in {time.monotonic() - started:.0f} s: {root}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pisim", description="Simulated Raspberry Pi farm (needs root)."
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start a farm in the background")
    up.add_argument("--nodes", type=int, default=2)
    up.add_argument("--name", default="demo")
    up.add_argument("--subnet-index", type=int, default=1)
    up.add_argument("--profiles", default="pi3b-legacy,pi4b-bookworm")
    up.add_argument("--downtime", type=float, default=2.0)
    up.add_argument("--json", action="store_true")
    up.add_argument(
        "--slower",
        action="append",
        default=[],
        metavar="NODE:SECONDS[:SHARE]",
        help="from SECONDS after each boot NODE gets only SHARE of its CPU (Faults.slower_after_s)",
    )
    st = sub.add_parser("status", help="nodes up/down and boot counts")
    st.add_argument("--name")
    down = sub.add_parser("down", help="tear a farm down")
    group = down.add_mutually_exclusive_group()
    group.add_argument("--name", default="demo")
    group.add_argument("--all", action="store_true")
    sub.add_parser("build-root", help="build the i386 root of the 32-bit nodes (cached)")
    sv = sub.add_parser("supervise", help=argparse.SUPPRESS)
    sv.add_argument("rundir")
    sv.add_argument("--owner-pid", type=int)
    args = parser.parse_args(argv)
    if args.cmd == "supervise":
        from .supervisor import main as supervise

        return supervise(args.rundir, args.owner_pid)
    commands = {"up": cmd_up, "status": cmd_status, "down": cmd_down, "build-root": cmd_build_root}
    return commands[args.cmd](args)
