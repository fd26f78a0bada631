"""NIC offloads off for a measurement, and back exactly as they were afterwards.

The device is the one each end routes the other end's address through (`ip -o route get`).
Setup saves `ethtool -k` of that device in the trial's directory, then turns tx, rx, tso, gro
and gso off; teardown sets every feature that can change back to its saved state, and does
nothing when setup never saved one. The saved state is read back as a detail of the result.
"""

from __future__ import annotations

from benchmarks.catalog.spec import Command, Context, Where

STATE_FILE = "offloads.before"
OFF = ("tx", "off", "rx", "off", "tso", "off", "gro", "off", "gso", "off")
# What `ethtool -k` calls the features OFF names: the ones a result records.
RECORDED = (
    "tx-checksumming", "rx-checksumming", "tcp-segmentation-offload",
    "generic-receive-offload", "generic-segmentation-offload",
)  # fmt: skip

# $1 the other end's address, $2 the state file. Its first line names the device.
_SAVE_AND_TURN_OFF = r"""
set -eu
dev=$(ip -o route get "$1" | sed -n 's/.* dev \([^ ]*\).*/\1/p')
[ -n "$dev" ] || { echo "no route to $1, so no device to change" >&2; exit 1; }
{ echo "device: $dev"; ethtool -k "$dev"; } > "$2.tmp"
mv -f -- "$2.tmp" "$2"
shift 2
ethtool -K "$dev" "$@"
"""

# $1 the state file. What is restored is what was requested (`off [requested on]` is "on":
# the kernel turns it on when it can), feature by feature. Aggregates (a line followed by
# indented ones) are left out: their members are set, in one ethtool call so dependencies
# settle together.
_RESTORE = r"""
set -u
[ -s "$1" ] || exit 0
dev=$(sed -n '1s/^device: //p' "$1")
ip link show dev "$dev" > /dev/null 2>&1 || exit 0
changeable() {
  awk 'NR > 1 { indented[NR] = /^\t/ }
       NR > 1 && !/\[fixed\]/ && /: (on|off)/ {
         name = $1; sub(/:$/, "", name); wanted = $2
         if (/\[requested on\]/) wanted = "on"; if (/\[requested off\]/) wanted = "off"
         state[NR] = name " " wanted }
       END { for (i = 2; i <= NR; i++)
               if ((i in state) && !(indented[i + 1] && !indented[i])) print state[i] }'
}
saved=$(sed 1d "$1" | changeable)
now=$(ethtool -k "$dev" | changeable)
[ "$saved" = "$now" ] && exit 0
# shellcheck disable=SC2086 (names and states are ethtool's own words)
ethtool -K "$dev" $saved > /dev/null
now=$(ethtool -k "$dev" | changeable)
[ "$saved" = "$now" ] || { echo "$dev: offloads not fully restored" >&2; exit 1; }
"""


def turn_off(on: Where, workdir: str, other_address: str) -> Command:
    script = ("sh", "-c", _SAVE_AND_TURN_OFF, "pifarm-offloads-off")
    argv = (*script, other_address, f"{workdir}/{STATE_FILE}", *OFF)
    return Command(on, argv, timeout_s=20, sudo=True)


def restore(on: Where, workdir: str) -> Command:
    argv = ("sh", "-c", _RESTORE, "pifarm-offloads-restore", f"{workdir}/{STATE_FILE}")
    return Command(on, argv, timeout_s=20, sudo=True)


def read_state(on: Where, workdir: str) -> Command:
    return Command(on, ("cat", "--", f"{workdir}/{STATE_FILE}"), name=f"offloads_{on}")


def commands(ctx: Context) -> tuple[tuple[Command, ...], tuple[Command, ...], tuple[Command, ...]]:
    """(setup, collect, teardown) for both ends."""
    setup = (
        turn_off("board", ctx.workdir, ctx.peer_address),
        turn_off("peer", ctx.peer_workdir, ctx.board_address),
    )
    collect = (read_state("board", ctx.workdir), read_state("peer", ctx.peer_workdir))
    teardown = (restore("board", ctx.workdir), restore("peer", ctx.peer_workdir))
    return setup, collect, teardown


def parse_state(text: str) -> dict[str, str]:
    """The saved state of the features turned off: {"device": ..., feature: "on"/"off"}."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("device: "):
        return {}
    state = {"device": lines[0].removeprefix("device: ").strip()[:20]}
    for line in lines[1:]:
        name, _, rest = line.partition(":")
        if name in RECORDED and rest.split()[:1] in (["on"], ["off"]):
            state[name] = rest.split()[0]
    return state
