#!/bin/sh
# vcgencmd -- SIMULATED by pisim (no VideoCore here).
#
# The three readings pifarm's sampler takes every second (measure_clock arm, measure_temp,
# get_throttled) are answered here in sh, from /run/pisim/vcgencmd.env that each simulated
# boot writes: a real vcgencmd is a small C program, and a Python start-up per reading would
# take a good part of a node's CPU quota at its idle clock. Everything else (and every reading
# on a hostile node, which gets no .env) goes to the full emulator, pisim-vcgencmd. Both give
# the same answers in the formats of shared/reference/raspberry-pi.yaml (vcgencmd).
facts=/run/pisim/vcgencmd.env
policy=/sys/devices/system/cpu/cpufreq/policy0
case "$*" in
  "measure_clock arm" | measure_clock | measure_temp | get_throttled) ;;
  *) exec pisim-vcgencmd "$@" ;;
esac
[ -r "$facts" ] || exec pisim-vcgencmd "$@"
. "$facts"
case $1 in
  get_throttled)
    echo "throttled=$throttled"
    ;;
  measure_temp)
    milli=
    read -r milli 2>/dev/null < /sys/class/thermal/thermal_zone0/temp || true
    case $milli in '' | *[!0-9]*) milli=45000 ;; esac
    tenths=$(((milli + 50) / 100))
    echo "temp=$((tenths / 10)).$((tenths % 10))'C"
    ;;
  measure_clock)
    # yaml: overclocking.general: busy cores at arm_freq, idle at arm_freq_min; force_turbo
    # pins the maximum; under ondemand, the clock the node's PID 1 chose (scaling_cur_freq).
    governor=
    read -r governor 2>/dev/null < "$policy/scaling_governor" || governor=ondemand
    if [ "$force_turbo" != 0 ] || [ "$governor" = performance ]; then
      mhz=$arm_freq
    elif [ "$governor" = powersave ] || [ "$governor" = userspace ]; then
      mhz=$arm_freq_min
    else
      khz=
      read -r khz 2>/dev/null < "$policy/scaling_cur_freq" || true
      case $khz in '' | *[!0-9]*) mhz=$arm_freq_min ;; *) mhz=$((khz / 1000)) ;; esac
    fi
    [ "$arm_limit_mhz" -gt 0 ] && [ "$mhz" -gt "$arm_limit_mhz" ] && mhz=$arm_limit_mhz
    # Real readings are a little off the nominal value, e.g. frequency(48)=1500345728.
    echo "frequency($arm_clock_id)=$((mhz * 1000000 + $$ * 7919 % (mhz * 250 + 1)))"
    ;;
esac
