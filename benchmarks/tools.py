"""Which of a benchmark's tools an end lacks: one check for a run and for "prepare board"."""

from collections.abc import Sequence

from benchmarks.endpoints import Endpoint
from devices.tools import HAS_TOOL

CHECK_TIMEOUT_S = 15
# Prints each tool that is missing, by devices.tools' rule (as the probe's list is made).
TOOLS_CHECK = HAS_TOOL + 'for tool; do has_tool "$tool" || echo "$tool"; done\n'


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
        if tool in probed:  # the probe looks for "7zz|7z" as the catalog names it
            if not probed[tool]:
                missing.append(tool)
            continue
        alternatives = tool.split("|")
        if any(probed.get(one) for one in alternatives):
            continue
        if all(one in probed for one in alternatives):
            missing.append(tool)
        else:
            unknown.append(tool)
    return missing, unknown
