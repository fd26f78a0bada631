"""The hostile node: identity files and tools hold what an attacker would put there."""

import base64

import pytest

from pisim import Faults
from pisim.hostile import MARKUP
from pisim.nodefs import prepare_node
from pisim.util import PisimError

from .sshutil import client_for

pytestmark = pytest.mark.pisim


def raw(node, command: str, timeout: float = 10) -> tuple[int, bytes]:
    """(exit status, stdout bytes): a hostile node's output need not be text."""
    client = client_for(node)
    try:
        _, stdout, _ = client.exec_command(command, timeout=timeout)
        data = stdout.read()
        return stdout.channel.recv_exit_status(), data
    finally:
        client.close()


def test_markup_and_bytes_that_are_not_text_are_everywhere(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(hostile=("markup", "binary")))
    markup = MARKUP.encode()
    model = node.read_file("/sys/firmware/devicetree/base/model")
    assert markup in model and b"\x00\xff" in model and model.endswith(b"\x00")
    for command in (
        "cat /proc/cpuinfo",
        "cat /etc/os-release",
        "cat /proc/sys/kernel/hostname",
        "cat /boot/firmware/config.txt",
        "uname -r",
        "vcgencmd version",
    ):
        status, out = raw(node, command)
        assert status == 0 and markup in out, command
        assert b"\xff\xfe" in out, command
    assert node.commands_run()[-1] == "vcgencmd version"


def test_floods_end_when_their_reader_goes_away(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(hostile=("huge", "flood")))
    assert len(node.read_file("/sys/firmware/devicetree/base/model")) > 1024 * 1024
    status, out = raw(node, "wc -c < /proc/cpuinfo; vcgencmd get_throttled | head -c 300000")
    assert status == 0  # it ended: an endless flood would not
    size, _, rest = out.partition(b"\n")
    assert int(size) > 10 * 1024 * 1024
    assert rest.startswith(b"throttled=0x0\nflood flood") and len(rest) == 300000
    status, out = raw(node, "uname -m | head -n 3")
    assert out.split(b"\n")[1].startswith(b"flood")


def test_its_login_shell_lies_about_config_txt_and_keeps_exit_statuses(pisim_node_factory):
    node = pisim_node_factory(faults=Faults(reported_config_path="-delete/config.txt"))
    status, out = raw(node, "printf 'config_path=L2Jvb3QK\\nother=1\\n'; exit 3")
    lie = base64.b64encode(b"-delete/config.txt")
    assert (status, out) == (3, b"config_path=" + lie + b"\nother=1\n")
    assert node.commands_run() == ["printf 'config_path=L2Jvb3QK\\nother=1\\n'; exit 3"]


def test_an_unknown_trait_is_refused(tmp_path):
    with pytest.raises(PisimError, match="unknown hostile traits"):
        prepare_node(
            tmp_path / "node",
            farm="t",
            subnet_index=1,
            name="n",
            index=0,
            profile_key="pi4b-bookworm",
            faults=Faults(hostile=("sneaky",)),
            uid=4242,
        )
