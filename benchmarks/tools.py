"""Which of a benchmark's tools an end lacks: one check for a run and for "prepare board"."""

from collections.abc import Sequence

from benchmarks.endpoints import Endpoint

CHECK_TIMEOUT_S = 15
# Prints each tool that is missing; "a|b" is missing only when neither is there. The sbin
# directories count: a user's PATH over ssh lacks them, but sudo (which runs ethtool, nft,
# openvpn) finds them there.
TOOLS_CHECK = r"""
set -f
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
for tool; do
  found=
  IFS='|'
  for one in $tool; do command -v "$one" > /dev/null 2>&1 && found=1; done
  unset IFS
  [ -n "$found" ] || echo "$tool"
done
"""


def missing_tools(end: Endpoint, tools: Sequence[str]) -> list[str]:
    """The tools (as the benchmark names them) that end lacks; ssh.SSHError if it cannot tell."""
    if not tools:
        return []
    result = end.run(["sh", "-c", TOOLS_CHECK, "pifarm-tools", *tools], CHECK_TIMEOUT_S)
    return result.text.split()


def missing_by_probe(tools: Sequence[str], probed: dict[str, bool]) -> tuple[list[str], list[str]]:
    """(missing, unknown): the tools a probe's `tools` fact says are missing, and those it
    does not tell about (the probe looks for a fixed list). "a|b" is there if either is."""
    missing, unknown = [], []
    for tool in tools:
        alternatives = tool.split("|")
        if any(probed.get(one) for one in alternatives):
            continue
        if all(one in probed for one in alternatives):
            missing.append(tool)
        else:
            unknown.append(tool)
    return missing, unknown
