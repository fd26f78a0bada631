"""The two ends of a benchmark: a board (over the one SSH seam) or the controller itself.

Both run argument lists the same way and return the seam's Result, so a plan's commands do
not care where they run. Long commands (the measurement, servers) run detached on their end
under coreutils `timeout`, in their own session, writing to files in the trial's directory:
a lost connection or a killed worker cannot leave them running past their deadline, the job
can poll them (progress, the log's tail, a cancel), and stop() ends their whole process group.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from devices import ssh

KILL_AFTER_S = 5  # `timeout` sends KILL this long after its TERM, to a command that lingers

# The i-th poll's pause, where a script waits for a file to appear: 5 ms for the first 60
# (0.3 s: a sampler's first sample takes about 0.1 s), then 50 ms (about 2 s in all, at
# POLLS). Counted in polls, not in time, as sh has no clock; fewer than a hundred, as each is
# a fork: on a slow or loaded board, four hundred of them took 20 s.
POLLS = 94
_POLL_FUNCTION = r"""
poll() { if [ "$1" -lt 60 ]; then sleep 0.005; else sleep 0.05; fi; }
"""

# $1 dir, then for each command: its name, its timeout (s), the line it prints once ready (or
# nothing), its number of words, its words. Several commands start in one round trip (the
# sampler with the measurement), in order; the next starts once the one before printed its
# ready line (the sampler's first sample is not taken while the measurement starts). The
# wrapper leaves the caller's session (setsid). coreutils `timeout` makes a process group of its
# own, whose id (its pid) goes to <name>.pid: `kill -TERM -PID` reaches the command and anything
# it started. The exit status lands in <name>.exit by rename, so a reader never sees half of it.
_START = (
    (
        _POLL_FUNCTION
        + r"""
set -eu
dir=$1
shift
mkdir -p -- "$dir"
start_one() {
  name=$1 limit=$2 ready=$3
  shift 3
  # A name used before must not seem done at once.
  rm -f -- "$dir/$name.pid" "$dir/$name.exit" "$dir/$name.times" "$dir/$name.wrapper"
  setsid sh -c '
    dir=$1 name=$2 limit=$3; shift 3
    echo $$ > "$dir/$name.wrapper"
    PIFARM_TRIAL=$dir timeout -k {kill_after} "$limit" "$@" \
      > "$dir/$name.out" 2> "$dir/$name.err" < /dev/null &
    echo $! > "$dir/$name.pid"
    wait $!
    status=$?
    times > "$dir/$name.times" 2> /dev/null  # the CPU time of all it waited for (telemetry)
    echo $status > "$dir/$name.exit.tmp"
    mv -f -- "$dir/$name.exit.tmp" "$dir/$name.exit"
  ' pifarm-detached "$dir" "$name" "$limit" "$@" > /dev/null 2>&1 < /dev/null &
  # Polled (see poll): each poll is a fork on the board, but these come before the
  # measurement starts, and the measurement starts as soon as they end.
  i=0
  while [ ! -s "$dir/$name.pid" ] && [ $i -lt {polls} ]; do poll $i; i=$((i + 1)); done
  [ -s "$dir/$name.pid" ] || { echo "$name did not start" >&2; exit 1; }
  i=0
  while [ -n "$ready" ] && [ $i -lt {polls} ] && ! grep -qxF -- "$ready" "$dir/$name.out"; do
    poll $i; i=$((i + 1))
  done
}
while [ $# -gt 0 ]; do
  name=$1 limit=$2 ready=$3 count=$4
  shift 4
  # This command's words are the next $count: the eval sees only "${N}" references, never
  # the words themselves, so none of them is shell syntax.
  words= n=1
  while [ $n -le "$count" ]; do words="$words \"\${$n}\""; n=$((n + 1)); done
  eval "start_one \"\$name\" \"\$limit\" \"\$ready\" $words"
  shift "$count"
done
"""
    )
    .replace("{kill_after}", str(KILL_AFTER_S))
    .replace("{polls}", str(POLLS))
)

# $1 dir; the names follow. (dash's and busybox's kill take no "--": a process group is
# "-PGID" right after the signal.) TERM to each process group (and to `timeout` itself, should it
# not have made its group yet), KILL to what is left 2 s later.
_STOP_ALL_FUNCTION = r"""
stop_all() {
for name in "$@"; do
  [ -s "$dir/$name.pid" ] || continue
  [ -e "$dir/$name.exit" ] && continue
  pid=$(cat -- "$dir/$name.pid")
  kill -TERM "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
done
i=0
while [ $i -lt 200 ]; do
  alive=0
  for name in "$@"; do
    [ -s "$dir/$name.pid" ] || continue
    kill -0 "-$(cat -- "$dir/$name.pid")" 2>/dev/null && alive=1
  done
  [ $alive -eq 0 ] && return 0
  sleep 0.01; i=$((i + 1))
done
for name in "$@"; do
  [ -s "$dir/$name.pid" ] && kill -KILL "-$(cat -- "$dir/$name.pid")" 2>/dev/null
done
return 0
}
"""
# $1 dir, $2 name, $3 seconds to wait at most, $4 bytes of log tail, $5 a companion to stop
# once the command ended, or nothing. Prints the exit status (or "running"), the output's size
# and the tail's on its first line, then the output's tail: for a short output, all of it, so
# no second round trip reads it; then, where a companion was stopped, its output (the
# sampler's: one round trip fewer after each measurement). "vanished" instead of a status: the
# command's `timeout` is gone (or a zombie) and no exit status came, so the wrapper that
# writes it was killed (out of memory, or by the command itself) and none ever will: the
# wrapper (its pid in <name>.wrapper) is gone too. A wrapper still there, only slow (a loaded
# board), is waited for: "running", and the next wait sees its status. Only /proc is read for
# that: kill -0 cannot tell a gone process from a root one (sudo).
_WAIT = (
    _STOP_ALL_FUNCTION
    + _POLL_FUNCTION
    + r"""
dir=$1 name=$2 limit=$3 tail=$4 companion=${5:-}
pid= wrapper=
[ -s "$dir/$name.pid" ] && read -r pid < "$dir/$name.pid"
[ -s "$dir/$name.wrapper" ] && read -r wrapper < "$dir/$name.wrapper"
gone() {  # $1 a pid: gone, or a zombie
  [ -r /proc/1/stat ] || return 1  # /proc hides others' processes (hidepid): cannot tell
  stat=
  read -r stat < "/proc/$1/stat" 2>/dev/null || return 0
  state=${stat##*) }
  [ "${state%% *}" = Z ]
}
leader_gone() { [ -n "$pid" ] && gone "$pid"; }
i=0 steps=$((limit * 20))
if [ -n "$pid" ] && [ ! -e "$dir/$name.exit" ]; then
  # Block until the command's `timeout` ends, for the slice at most: GNU tail looks every
  # 10 ms from one process, where a loop of sleeps would fork 20 times a second on the board
  # while it measures (and see the end 25 ms later on average). Without it (busybox), the
  # loop below polls.
  timeout "$limit" tail --pid="$pid" -s 0.01 -f /dev/null > /dev/null 2>&1
  [ $? -eq 124 ] && steps=0  # the whole slice passed: it still runs
fi
while [ ! -e "$dir/$name.exit" ] && [ $i -lt $steps ] && ! leader_gone; do
  sleep 0.05; i=$((i + 1))
done
if [ ! -e "$dir/$name.exit" ] && leader_gone; then
  # The wrapper writes the status just after `timeout` ends: give it a moment, also when the
  # slice ran out as the command ended (the measurement is over: polls no longer disturb it).
  j=0
  while [ ! -e "$dir/$name.exit" ] && [ $j -lt {polls} ]; do poll $j; j=$((j + 1)); done
fi
if [ -e "$dir/$name.exit" ]; then read -r status < "$dir/$name.exit"
elif leader_gone && { [ -z "$wrapper" ] || gone "$wrapper"; }; then status=vanished
else status=running
fi
# The tail is copied first and its own length sent: a child the command left behind may
# still write to the output, and what follows the tail (a companion's output) must not shift.
# (Not into $dir: a command started through sudo made it root's.)
copy=$(mktemp) || exit 1
trap 'rm -f -- "$copy"' EXIT
tail -c "$tail" -- "$dir/$name.out" > "$copy" 2>/dev/null
size=$(wc -c < "$dir/$name.out" 2>/dev/null) || size=0
shown=$(wc -c < "$copy")
echo "$status $size $shown"
cat -- "$copy"
if [ -n "$companion" ] && [ "$status" != running ] && [ "$status" != vanished ]; then
  stop_all "$companion"
  cat -- "$dir/$companion.out" 2>/dev/null
fi
exit 0
"""
).replace("{polls}", str(POLLS))

_STOP = (
    _STOP_ALL_FUNCTION
    + r"""
dir=$1; shift
stop_all "$@"
"""
)
# $1 dir, $2 name: stop it, then print its output (the sampler's readings), in one round trip.
_STOP_AND_READ = (
    _STOP_ALL_FUNCTION
    + r"""
dir=$1 name=$2
stop_all "$name"
cat -- "$dir/$name.out" 2>/dev/null
exit 0
"""
)

# $1 dir. Every process that still carries the trial's mark in its environment (a child that
# left its process group with setsid, say), and every descendant of one (sudo empties the
# environment, so what it starts has no mark, but sudo waits for it, marked): KILL. The tree
# is read whole before anything is killed, so no child is orphaned on the way. One grep reads
# every environ at once. Then the directory goes. Not found: a child sudo started that left
# its parent too (`sudo -b`, or a root shell that daemonized it): nothing on it is the trial's.
_SWEEP = r"""
dir=$1
marked=$(grep -lzx -- "PIFARM_TRIAL=$dir" /proc/[0-9]*/environ 2>/dev/null \
  | sed 's|^/proc/||; s|/environ$||')
if [ -n "$marked" ]; then
  victims=$(
    for f in /proc/[0-9]*/stat; do
      read -r stat < "$f" 2>/dev/null || continue
      pid=${f#/proc/}; pid=${pid%/stat}
      set -- ${stat##*) }  # after the name, which may hold anything: state, parent, ...
      echo "$pid $2"
    done | awk -v marked="$marked" '
      BEGIN { n = split(marked, found, "\n"); for (i = 1; i <= n; i++) doomed[found[i]] = 1 }
      { parent[$1] = $2 }
      END {
        do {
          more = 0
          for (p in parent)
            if (!(p in doomed) && (parent[p] in doomed)) { doomed[p] = 1; more = 1 }
        } while (more)
        for (p in doomed) print p
      }'
  )
  for pid in $victims; do
    [ "$pid" = "$$" ] || kill -KILL "$pid" 2>/dev/null
  done
fi
rm -rf -- "$dir"
"""
# $1 dir, $2 the sweep: as root when sudo allows it without a password (as Raspberry Pi OS's
# `pi`), since a process the trial started through sudo is root's, and only root may read its
# environment and kill it. One sudo (it costs tens of ms on a board): where it is refused, or
# the sweep failed, the user runs the sweep (again: it is harmless twice) and what it could
# not do is reported. sudo's own words are dropped: on a board without passwordless sudo,
# "a password is required" comes after every trial and says nothing new.
_FINISH = r"""
sudo -n sh -c "$2" pifarm-sweep "$1" 2>/dev/null || exec sh -c "$2" pifarm-sweep "$1"
"""

# The longest single wait: between two, the job renews its lock, shows the output's tail and
# looks for a cancel. Each slice costs a round trip; the wait itself returns as the command ends.
WAIT_SLICE_S = 3


class StartFailed(ssh.SSHError):
    """The end answered, but a detached command did not start there (its words say why; the
    caller names the command)."""


class Endpoint:
    """Where commands run. Subclasses give run(); the detached helpers build on it."""

    name: str = ""

    def run(
        self,
        argv: Sequence[str],
        timeout: float,
        *,
        sudo: bool = False,
        stdin: bytes | None = None,
        output_cap: int = ssh.OUTPUT_CAP,
    ) -> ssh.Result:
        """Run argv to its end (or timeout); every element stays one word."""
        raise NotImplementedError

    def start(
        self,
        directory: str,
        name: str,
        argv: Sequence[str],
        timeout: float,
        *,
        sudo: bool = False,
        after: Sequence[Detached] = (),
    ) -> None:
        """Start argv detached; it is killed after timeout seconds whatever happens here.
        after: detached commands that start just before it, in the same round trip and as the
        same user (the sampler's baseline comes before the measurement, at no extra cost)."""
        words = []
        for command in (*after, Detached(name, argv, timeout)):
            words += [command.name, f"{command.timeout:g}", command.ready, str(len(command.argv))]
            words += command.argv
        result = self.run(["sh", "-c", _START, "pifarm-start", directory, *words], 10, sudo=sudo)
        if not result.ok:
            raise StartFailed(f"did not start on {self.name}: {result.error_text()}")

    def wait(
        self,
        directory: str,
        name: str,
        *,
        up_to_s: float = WAIT_SLICE_S,
        tail_bytes: int = 2000,
        then_stop: str = "",
        companion_cap: int = 4 * 1024 * 1024,
    ) -> Waited:
        """then_stop: a detached companion (of the same user) to stop once it ended, whose
        output comes back in Waited.companion."""
        seconds = max(1, int(up_to_s))
        argv = ["sh", "-c", _WAIT, "pifarm-wait", directory, name, str(seconds), str(tail_bytes)]
        result = self.run(
            [*argv, then_stop], seconds + 20, output_cap=tail_bytes + companion_cap + 100
        )
        first, _, rest = result.stdout.partition(b"\n")
        try:
            status, size, shown = first.decode("utf-8", "replace").split()
            exit_status = None if status in ("running", "vanished") else int(status)
            shown = int(shown)
            whole = int(size) == shown  # the tail is all there is
        except ValueError:
            problem = f"could not tell whether the command ended: {first[:200]!r}"
            raise ssh.SSHError(problem) from None
        companion = None
        if then_stop and exit_status is not None:
            rest, companion = rest[:shown], rest[shown:].decode("utf-8", "replace")
        return Waited(
            exit_status,
            rest.decode("utf-8", "replace"),
            whole,
            vanished=status == "vanished",
            companion=companion,
        )

    def stop(self, directory: str, names: Sequence[str], *, sudo: bool = False) -> None:
        if names:
            self.run(["sh", "-c", _STOP, "pifarm-stop", directory, *names], 15, sudo=sudo)

    def stop_and_read(self, directory: str, name: str, cap: int, *, sudo=False) -> ssh.Result:
        argv = ["sh", "-c", _STOP_AND_READ, "pifarm-stop-read", directory, name]
        return self.run(argv, 15, sudo=sudo, output_cap=cap)

    def finish(self, directory: str, *, sudo: bool = False) -> ssh.Result:
        """End what the trial's commands left behind, however it left (a child in a session of
        its own: they all carry the trial's mark; one started through sudo: its parent does),
        as root where sudo allows, and remove the trial's directory."""
        argv = ["sh", "-c", _FINISH, "pifarm-finish", directory, _SWEEP]
        return self.run(argv, 30, sudo=sudo)

    def read(self, path: str, cap: int, *, sudo: bool = False) -> ssh.Result:
        return self.run(["cat", "--", path], 30, sudo=sudo, output_cap=cap)


@dataclass(frozen=True)
class Detached:
    """A command to start detached, under a name in the trial's directory."""

    name: str
    argv: Sequence[str]
    timeout: float
    ready: str = ""  # a line it prints once ready: what starts after it waits for it (<= 2 s)


@dataclass(frozen=True)
class Waited:
    exit_status: int | None  # None: still running
    tail: str
    whole: bool = False  # the tail is the whole output
    vanished: bool = False  # it ended, but its exit status never will be known (_WAIT)
    companion: str | None = None  # the output of the companion it stopped (then_stop)

    @property
    def finished(self) -> bool:
        return self.exit_status is not None or self.vanished


class BoardEndpoint(Endpoint):
    """A board, through an open session of the SSH seam."""

    def __init__(self, name: str, session: ssh.Session):
        self.name, self.session = name, session

    def run(self, argv, timeout, *, sudo=False, stdin=None, output_cap=ssh.OUTPUT_CAP):
        return self.session.run(argv, timeout, sudo=sudo, stdin=stdin, output_cap=output_cap)


class ControllerEndpoint(Endpoint):
    """The worker's own host, as the peer of network benchmarks ("controller").

    Root commands go through `sudo -n` unless the worker already is root.
    """

    name = "controller"

    def run(self, argv, timeout, *, sudo=False, stdin=None, output_cap=ssh.OUTPUT_CAP):
        command = list(argv)
        if sudo and os.geteuid() != 0:
            command = ["sudo", "-n", "--", *command]
        try:
            done = subprocess.run(
                command, input=stdin, capture_output=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise ssh.CommandTimeout(
                f"{argv[0]} did not finish within {timeout:g} s on the controller; it was stopped"
            ) from None
        except OSError as exc:
            problem = f"{shlex.join(argv[:1])} could not run on the controller: {exc}"
            raise ssh.SSHError(problem) from None
        return ssh.Result(
            done.returncode if done.returncode >= 0 else ssh.KILLED_BY_SIGNAL,
            done.stdout[:output_cap],
            done.stderr[:output_cap],
            len(done.stdout) > output_cap,
            len(done.stderr) > output_cap,
        )
