"""The sampler and the quiet check: POSIX sh scripts (dash, busybox sh) run on a board or on
the controller, printing raw counters that telemetry.samples turns into rates.

Kept cheap for a Pi Zero: builtins read /proc and /sys (no process per PID); a sample costs the
three vcgencmd calls, two subshells and the sleep.
"""

import re
from collections.abc import Iterable

# Shared by the sampler and the quiet check. `names` holds the process names to follow (plain
# words, checked by sampler_argv). `set -f`: the unquoted expansions below split, never glob.
_FUNCTIONS = r"""
set -f
header() {
  clk=$(getconf CLK_TCK 2>/dev/null) || clk=
  case $clk in '' | *[!0-9]*) clk=100 ;; esac
  cpus=0
  while read -r key _; do
    case $key in cpu[0-9]*) cpus=$((cpus + 1)) ;; esac
  done < /proc/stat
  printf 'pifarm-sampler 1\nclk_tck %s\ncpus %s\n' "$clk" "$cpus"
}
# key file: the key, then the file's first line; nothing when the file cannot be read.
line_of() {
  v=
  read -r v 2>/dev/null < "$2" || [ -n "$v" ] || return 0
  printf '%s %s\n' "$1" "$v"
}
# label, then the fields of a /proc/PID/stat line after comm (state first): prints the label
# and utime stime cutime cstime (fields 14-17 of the line).
ticks() {
  [ $# -ge 16 ] || return 0
  label=$1
  shift 12
  printf '%s %s %s %s %s\n' "$label" "$1" "$2" "$3" "$4"
}
readings() {
  if [ -n "$vc" ]; then
    # At most three lines: a vcgencmd that floods cannot fill the log.
    { vcgencmd measure_clock arm; vcgencmd measure_temp; vcgencmd get_throttled; } 2>&1 |
      { n=0; while [ $n -lt 3 ] && IFS= read -r v; do echo "vc $v"; n=$((n + 1)); done; }
  fi
  line_of cur_freq_khz /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq
  line_of thermal_milli_c /sys/class/thermal/thermal_zone0/temp
  swap_total= swap_free=
  while read -r key value _; do
    case $key in SwapTotal:) swap_total=$value ;; SwapFree:) swap_free=$value && break ;; esac
  done < /proc/meminfo
  echo "swap_kb $swap_total $swap_free"
}
# A cheap pass over every process's comm (dash's read takes a byte per system call), the stat
# line only for those followed. In that line comm may hold spaces and parentheses: the fields
# start after the last ')'.
procs() {
  [ -n "$names" ] || return 0
  set +f
  set -- /proc/[0-9]*/comm
  set -f
  for f do
    comm=
    IFS= read -r comm 2>/dev/null < "$f" || continue
    for name in $names; do
      case $comm in
        "$name" | "$name"/* | "$name"-* | "$name":*)
          line=
          read -r line 2>/dev/null < "${f%/comm}/stat" || break
          case $line in *")"*) ;; *) break ;; esac
          # The time of this very read: a loaded board can stall the loop for a while.
          up=
          read -r up _ 2>/dev/null < /proc/uptime
          session_tag ${line##*[)]}
          ticks "proc $name ${line%% *} ${up:--} $tag" ${line##*[)]}
          break ;;
      esac
    done
  done
}
# The fields after comm (state ppid pgrp session ...) -> tag: "trial" when the process is in
# the measurement's session (its wrapper makes one, benchmarks.endpoints), else "-".
session_tag() {
  tag=-
  [ -n "$trial_sid" ] && [ "$4" = "$trial_sid" ] && tag=trial
  return 0
}
# The measurement's session, once its pid file names a live process; and, once it ended, the
# CPU time of its whole process tree (the wrapper's `times` after its wait: children's user
# and system time, every helper, shell and thread it waited for included).
trial_counters() {
  [ -n "$trial" ] || return 0
  if [ -z "$trial_sid" ] && [ -s "$trial.pid" ]; then
    pid= line=
    read -r pid < "$trial.pid" && read -r line 2>/dev/null < "/proc/$pid/stat" &&
      set -- ${line##*[)]} && trial_sid=$4
  fi
  if [ -s "$trial.times" ]; then
    { read -r _; read -r user system _; } < "$trial.times" && echo "trial_times $user $system"
  fi
}
counters() {
  line_of uptime /proc/uptime
  while read -r key rest; do
    case $key in cpu) echo "stat cpu $rest" ;; cpu[0-9]*) echo "core $key $rest" ;; *) break ;; esac
  done < /proc/stat
  line_of loadavg /proc/loadavg
  line=
  read -r line < "/proc/$$/stat" && ticks self ${line##*[)]}
  trial_counters
  procs
}
vc=
trial_sid=
command -v vcgencmd > /dev/null 2>&1 && vc=1
"""

SAMPLE_DONE = "end"  # the sampler's line after each sample: after the first, it is ready

# $1 seconds between samples; $2 the path of the measurement's files less their suffix
# (<dir>/<name>: .pid, .times, see benchmarks.endpoints), or nothing; the names of the processes
# to follow come next. A TERM (the engine's stop, or the timeout) takes one last sample, so a
# trial shorter than the interval still has a reading after it.
SAMPLER = (
    r"""
interval=$1 trial=$2
shift 2
names=$*
"""
    + _FUNCTIONS
    + r"""
sample() { echo sample; readings; counters; echo end; }
trap 'sample; exit 0' TERM INT HUP
header
while :; do
  sample
  sleep "$interval"
done
"""
)

# One round of the quiet check: the counters over a window of $1 seconds, then the readings
# (temperature, clock): after the window, so that the round's own vcgencmd calls are not in it.
# The window opens a tenth of a second after the round starts: the CPU time of its start
# (sshd, the shell) may reach the counters a little late (a simulated board's by up to 50 ms).
QUIET_ROUND = (
    "names= trial=\n"
    + _FUNCTIONS
    + r"""
header
sleep 0.1
echo sample; counters; echo end
sleep "$1"
echo sample; counters; readings; echo end
"""
)

QUIET_ROUND_TIMEOUT_S = 20  # a round takes its window and a bit (3 vcgencmd calls, one sleep)
# The processes a network or tunnel trial involves besides its tool (modern scp is sftp-server
# on the far end; sshd matches sshd-session too). The engine adds the tool's own name.
# usbnic: a simulated Pi 1 B's USB Ethernet (pisim/usbnic.py), doing the frames' work that a
# Pi's smsc95xx driver does in its kernel, as ksoftirqd does here.
NETWORK_PROCESSES = (
    "iperf3",
    "openvpn",
    "wireguard-go",
    "sshd",
    "scp",
    "sftp-server",
    "ksoftirqd",
    "usbnic",
)
# Followed with the CPU time of their children that ended: the commands pifarm's own round trips
# run in the SSH session (the start, the polls, the stop: shells, sleeps, cats) are reaped
# into their sshd's, and are the engine's work, not background.
WITH_CHILDREN = ("sshd",)
_PROCESS_NAME = re.compile(r"[A-Za-z0-9._+-]{1,15}")  # comm keeps 15 characters


def followable(names: Iterable[str]) -> list[str]:
    """The names the sampler can follow (a command's comm: 1-15 plain characters), once each;
    "a|b" (either tool) gives both."""
    split = (one for name in names for one in name.split("|"))
    return [name for name in dict.fromkeys(split) if _PROCESS_NAME.fullmatch(name)]


def sampler_argv(interval_s: float, process_names: Iterable[str], trial: str = "") -> list[str]:
    """The sampler's argv for endpoint.start(dir, "sampler", argv, timeout). trial: the
    measurement's <dir>/<name>, whose process tree is the trial's own work."""
    if not 0.1 <= float(interval_s) <= 60:
        raise ValueError(f"sampler interval {interval_s!r} s is not between 0.1 and 60 s")
    names = list(dict.fromkeys(process_names))
    bad = [name for name in names if not _PROCESS_NAME.fullmatch(name)]
    if bad:
        raise ValueError(f"process names must be 1-15 of A-Z a-z 0-9 . _ + -, not {bad!r:.80}")
    return ["sh", "-c", SAMPLER, "pifarm-sampler", f"{float(interval_s):g}", trial, *names]
