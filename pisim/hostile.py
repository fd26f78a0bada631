"""A hostile simulated Pi: identity files and tools holding what an attacker would put there.

pifarm treats everything a board prints as untrusted; this is the board that tests it. The
traits are chosen with Faults(hostile=(...)) when the node is created:

- "markup": HTML and script in the device-tree model, /proc/cpuinfo (Model, Serial),
  os-release, the hostname, config.txt, `uname -r` and `vcgencmd version`;
- "binary": NUL bytes and invalid UTF-8 in the same places (a hostname cannot hold NUL);
- "huge": a 1 MB model string, a 10 MB /proc/cpuinfo (the Revision line past its first
  10 MB), a 1 MB os-release name, a 2 MB config.txt and a hostname at the kernel's 64 bytes;
- "flood": vcgencmd and uname print their answer, then junk lines without end.

Faults(reported_config_path="-delete/config.txt") makes the node's login shell rewrite the
config_path fact of pifarm's probe: a board lying about where its config.txt is.

A hostile node's login shell (nodebin/hostile_shell.py) logs every command it is given to
COMMAND_LOG inside the node, so that tests can check what pifarm ran there (Node.commands_run).
"""

from __future__ import annotations

from .profiles import Profile, render_cpuinfo

TRAITS = ("markup", "binary", "huge", "flood")
MARKUP = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
BINARY = b"\x00\xff\xfe\xc3\x28 (NUL and invalid UTF-8)"
MB = 1024 * 1024
HOSTNAME_MAX = 64  # the kernel's limit (HOST_NAME_MAX)
COMMAND_LOG = "/home/pi/.pisim-commands.log"  # kept across reboots, like the home directory
SHELL = "/usr/local/bin/pisim-shell"


def check_traits(traits) -> None:
    unknown = sorted(set(traits) - set(TRAITS))
    if unknown:
        raise ValueError(f"unknown hostile traits {unknown}; known: {', '.join(TRAITS)}")


def is_hostile(info: dict) -> bool:
    return bool(info.get("hostile") or info.get("reported_config_path"))


def model(profile: Profile, traits) -> bytes:
    """The device-tree model without its trailing NUL."""
    value = profile.model.encode()
    if "markup" in traits:
        value += b" " + MARKUP.encode()
    if "binary" in traits:
        value += b" " + BINARY
    if "huge" in traits:
        value += b" " + b"A" * MB
    return value


def cpuinfo(profile: Profile, serial: str, ncpu: int, traits) -> bytes:
    text = render_cpuinfo(profile, serial, ncpu)
    if "markup" in traits:
        text = text.replace(f": {profile.model}\n", f": {profile.model} {MARKUP}\n")
        text = text.replace(f": {serial}\n", f": {serial}{MARKUP}\n")
    value = text.encode()
    if "binary" in traits:
        value += b"Model\t\t: Pi " + BINARY + b"\nSerial\t\t: " + BINARY + b"\n"
    if "huge" in traits:
        line = b"Features\t: " + b"x" * 1000 + b"\n"
        value = line * (10 * MB // len(line) + 1) + value
    return value


def os_release(profile: Profile, traits) -> bytes:
    # A later line wins in a KEY=value file: the hostile lines go at the end.
    return _with_lines(
        profile.os_release.encode(),
        traits,
        markup=f'PRETTY_NAME="Debian {MARKUP}"\nVERSION_CODENAME={MARKUP}\n'.encode(),
        binary=b'PRETTY_NAME="Debian ' + BINARY + b'"\n',
        huge=b'PRETTY_NAME="' + b"D" * MB + b'"\n',
    )


def hostname(name: str, traits) -> bytes:
    value = name.encode()
    if "markup" in traits:
        value = MARKUP.encode()
    if "binary" in traits:
        value += BINARY.replace(b"\x00", b"")
    if "huge" in traits:
        value += b"h" * HOSTNAME_MAX
    return value[:HOSTNAME_MAX]


def config_txt(profile: Profile, traits) -> bytes:
    return _with_lines(
        profile.config_txt.encode(),
        traits,
        markup=f"# </pre>{MARKUP}\ndtoverlay={MARKUP}\n".encode(),
        binary=b"# " + BINARY + b"\n",
        huge=b"# padding padding padding padding padding padding padding\n" * (2 * MB // 58),
    )


def _with_lines(value: bytes, traits, **lines_by_trait: bytes) -> bytes:
    """value with the lines of each of the node's traits after it, in markup, binary, huge
    order."""
    return value + b"".join(lines for trait, lines in lines_by_trait.items() if trait in traits)
