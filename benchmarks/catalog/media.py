"""Media encoding: FLAC and MP3 (lame) of a generated WAV on the board's RAM disk."""

import re

from benchmarks.catalog import spec
from benchmarks.catalog.parsing import first_line, positive

CD_BYTES_PER_SECOND = 44100 * 2 * 2  # 44.1 kHz, 16-bit, stereo
WAV_HEADER_BYTES = 44

# $1 path, $2 seconds. A canonical 44-byte RIFF header (PCM, 2 channels, 44100 Hz, 16 bits),
# then one second of a deterministic signal (two tones and a little pseudo-random noise,
# integer arithmetic only for the noise) repeated: every board encodes the same bytes, and
# neither silence (too easy) nor pure noise (nothing to predict) skews the encoders. No
# python: awk and printf are on every Raspberry Pi OS.
_GENERATE_WAV = r"""
set -eu
path=$1 seconds=$2
le32() {
  for bits in 0 8 16 24; do printf "\\$(printf %03o $(( ($1 >> bits) & 255 )))"; done
}
data=$((seconds * 176400))
{
  printf 'RIFF'; le32 $((data + 36)); printf 'WAVEfmt '
  le32 16; printf '\001\000\002\000'; le32 44100; le32 176400; printf '\004\000\020\000'
  printf 'data'; le32 "$data"
} > "$path"
LC_ALL=C awk 'BEGIN {
  noise = 1
  for (frame = 0; frame < 44100; frame++) {
    t = frame / 44100
    noise = (noise * 75 + 74) % 65537
    left = 9000 * sin(6.283185307 * 440 * t) + 3000 * sin(6.283185307 * 1250 * t) \
      + (noise % 2001) - 1000
    right = 7000 * sin(6.283185307 * 330 * t) + 4000 * sin(6.283185307 * 2093 * t) \
      + (noise % 1501) - 750
    sample(left); sample(right)
  }
}
function sample(value,   word) {
  word = int(value); if (word < 0) word += 65536
  printf "%c%c", word % 256, int(word / 256)
}' > "$path.second"
i=0
while [ "$i" -lt "$seconds" ]; do cat -- "$path.second"; i=$((i + 1)); done >> "$path"
rm -f -- "$path.second"
"""

# $1 wav, $2 output, $3 the tool, $4 seconds at least; the encoder's own options follow.
# Timed on the board, encoding again until $4 seconds have passed.
_TIMED_ENCODE = r"""
set -eu
wav=$1 out=$2 tool=$3 min_ns=$(($4 * 1000000000)) rounds=0
shift 4
start=$(date +%s%N)
while :; do
  case $tool in
    flac) flac --silent --force "$@" -o "$out" -- "$wav" ;;
    lame) lame --quiet "$@" "$wav" "$out" ;;
  esac
  rounds=$((rounds + 1))
  end=$(date +%s%N)
  [ $((end - start)) -lt "$min_ns" ] || break
done
echo "ns=$((end - start)) bytes_in=$(wc -c < "$wav") bytes_out=$(wc -c < "$out") rounds=$rounds"
"$tool" --version | head -n 1
"""
# Version 1 encoded once and printed no rounds.
_RESULT_LINE = re.compile(
    r"ns=(\d{1,20}) bytes_in=(\d{1,20}) bytes_out=(\d{1,20})(?: rounds=(\d{1,9}))?"
)


def _encode_plan(tool: str, options: tuple[str, ...], params: dict, ctx: spec.Context) -> spec.Plan:
    wav, out = f"{ctx.workdir}/input.wav", f"{ctx.workdir}/output.{tool}"
    seconds, at_least = params["seconds"], params["min_seconds"]
    return spec.Plan(
        setup=(
            spec.Command(
                "board",
                ("sh", "-c", _GENERATE_WAV, "wav", wav, str(seconds)),
                timeout_s=60 + seconds / 5,
            ),
        ),
        measure=spec.Command(
            "board",
            ("sh", "-c", _TIMED_ENCODE, "encode", wav, out, tool, str(at_least), *options),
            # a Pi Zero encodes MP3 at about 1x real time
            timeout_s=60 + seconds * 2 + at_least,
        ),
        teardown=(spec.Command("board", ("rm", "-f", "--", wav, out)),),
    )


def _encode_parse(tool: str, text: str) -> spec.Parsed:
    match = _RESULT_LINE.search(text)
    if not match:
        raise spec.ParseError(f"no 'ns=… bytes_in=… bytes_out=…' line in the timed {tool} output")
    nanoseconds, bytes_in, bytes_out = map(int, match.groups()[:3])
    rounds = positive(int(match.group(4) or 1), "rounds")
    audio_seconds = positive((bytes_in - WAV_HEADER_BYTES) / CD_BYTES_PER_SECOND, "audio length")
    seconds = positive(nanoseconds / 1e9, f"{tool}'s encoding time") / rounds
    return spec.Parsed(
        values={"seconds": seconds, "realtime": audio_seconds / seconds},
        details={
            "tool_version": first_line(text, rf"^(?:{tool}|LAME)\b.*$"),
            "audio_seconds": audio_seconds,
            "bytes_out": bytes_out,
            "rounds": rounds,
        },
    )


MEDIA_METRICS = (
    spec.Metric("seconds", "s", False, "time to encode once"),
    spec.Metric("realtime", "x real time", True, "audio seconds encoded per second"),
)
_SECONDS = spec.Param("seconds", "int", 60, "length of the generated WAV (s)", min=1, max=600)

FLAC = spec.Benchmark(
    name="flac",
    title="FLAC encoding",
    description="Encodes a generated CD-quality stereo WAV (on the RAM disk) with flac at "
    "the given compression level; seconds, and x real time.",
    version=2,
    category="media",
    params=(
        _SECONDS,
        spec.Param("level", "int", 5, "compression level", min=0, max=8),
        spec.repeat_param(),
    ),
    metrics=MEDIA_METRICS,
    plan=lambda params, ctx: _encode_plan("flac", (f"-{params['level']}",), params, ctx),
    parse=lambda outputs, params: _encode_parse("flac", outputs.get("measure", "")),
    tools=("flac", "awk"),
    packages=("flac",),
    timeout_s=1260,
    length_param="min_seconds",
)

LAME_BITRATES = ("96", "128", "160", "192", "256", "320")

LAME = spec.Benchmark(
    name="lame",
    title="MP3 encoding (lame)",
    description="Encodes a generated CD-quality stereo WAV (on the RAM disk) to MP3 with lame "
    "at a constant bitrate and quality (-q 0 best and slowest, 9 fastest); seconds, and x "
    "real time.",
    version=2,
    category="media",
    params=(
        _SECONDS,
        spec.Param("bitrate", "choice", "192", "kbit/s", choices=LAME_BITRATES),
        spec.Param("quality", "int", 3, "algorithm quality (-q)", min=0, max=9),
        spec.repeat_param(),
    ),
    metrics=MEDIA_METRICS,
    plan=lambda params, ctx: _encode_plan(
        "lame", ("-b", params["bitrate"], "-q", str(params["quality"])), params, ctx
    ),
    parse=lambda outputs, params: _encode_parse("lame", outputs.get("measure", "")),
    tools=("lame", "awk"),
    packages=("lame",),
    timeout_s=1260,
    length_param="min_seconds",
)

BENCHMARKS = (FLAC, LAME)
