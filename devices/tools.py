"""Whether a board has a tool: one rule for the probe's list of tools and for the check a run
and "prepare board" make (benchmarks.tools).

"a|b" names a tool that either command provides: 7-Zip is 7zz in Debian 12's 7zip package
and 7z in the older p7zip-full, the same benchmark either way. The sbin directories count:
a user's PATH over ssh lacks them, but sudo, which runs ethtool, nft and openvpn, finds them.
"""

# has_tool "a|b": true if a or b is a command on the board.
HAS_TOOL = r"""
has_tool() {
  _found=1
  _ifs=$IFS
  IFS='|'
  set -f
  for _one in $1; do
    PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin command -v "$_one" >/dev/null 2>&1 && _found=0
  done
  set +f
  IFS=$_ifs
  return $_found
}
"""


def words(tool: str) -> str:
    """A tool as a person reads it: "7zz|7z" is "7zz or 7z"."""
    return " or ".join(tool.split("|"))
