"""config.txt and governor backups on the board: each write keeps one, the board keeps the
last few of each file (PIFARM_BOARD_BACKUPS_KEPT), the database keeps every config.txt one,
and the page says so."""

import pytest

from devices import apply_steps, presets, ssh
from devices.models import Application, Preset

from .simfarm import exists, register_node, target_for

pytestmark = [pytest.mark.pisim, pytest.mark.django_db(transaction=True)]
PI4_CONFIG = "/boot/firmware/config.txt"
GOVERNOR = apply_steps.GOVERNOR_FILE
QUICK = ssh.Timeouts(connect=2, banner=2, auth=2)


def backup_of(path: str, day: int) -> str:
    """A name as write_file_atomic makes it, made on day `day` of January 2020."""
    return f"{path}.pifarm-202001{day:02d}-120000-abcdef.bak"


def test_an_application_keeps_the_last_backups_on_the_board_and_says_so(
    pisim_node_factory, run_jobs, settings, logged_in
):
    settings.PIFARM_BOARD_BACKUPS_KEPT = 2
    settings.PIFARM_REBOOT_POLL = 0.3
    settings.SSH_CONNECT_TIMEOUT = 2
    node = pisim_node_factory(downtime=0.3)
    board = register_node(node)
    old = node.read_file(PI4_CONFIG)
    older = [backup_of(PI4_CONFIG, day) for day in (1, 2, 3)]
    for path in older:
        node.write_file(path, b"an older backup\n")
    not_ours = [
        f"{PI4_CONFIG}.bak",  # somebody's own
        f"{PI4_CONFIG}.pifarm-mine.bak",
        f"{backup_of(PI4_CONFIG, 1)}.keep",
        backup_of("/boot/firmware/cmdline.txt", 1),  # pifarm's, but of another file
    ]
    for path in not_ours:
        node.write_file(path, b"not a backup pifarm may remove\n")
    node.write_file(GOVERNOR, b"CPU_DEFAULT_GOVERNOR=ondemand\n")
    older_governors = [backup_of(GOVERNOR, day) for day in (1, 2, 3)]
    for path in older_governors:
        node.write_file(path, b"CPU_DEFAULT_GOVERNOR=powersave\n")
    preset = Preset.objects.create(name="oc")
    version = presets.new_version(preset, options={"arm_freq": "1900"}, governor="performance")

    application = presets.start_application(board, version, Application.Mode.DIRECT)
    run_jobs()
    application.refresh_from_db()

    assert application.state == Application.State.VERIFIED, application.reason
    assert node.read_file(application.backup_path) == old
    assert [exists(node, path) for path in older] == [False, False, True]  # the newest two stay
    assert [exists(node, path) for path in older_governors] == [False, False, True]
    for path in not_ours:
        assert node.read_file(path) == b"not a backup pifarm may remove\n"
    assert application.backup_text == old.decode()  # the database keeps every one
    page = logged_in.get(application.get_absolute_url()).content.decode()
    assert "The board keeps the last 2 backups; this one is also kept here" in page
    assert application.backup_path in page


def test_pruning_quotes_the_directory_and_removes_only_that_files_oldest_backups(pisim_farm):
    node = pisim_farm.nodes["pi4"]
    odd = "/home/pi/odd dir $(touch /tmp/pifarm-pwned) 'q' *"
    path = f"{odd}/-config.txt"
    kept_decoys = [f"{odd}/other.txt.pifarm-20200101-120000-abcdef.bak", f"{odd}/-config.txt"]
    with ssh.Session(target_for(node), QUICK) as session:
        backups = [backup_of(path, day) for day in (3, 1, 4, 2)]
        assert session.run(["mkdir", "-p", "--", odd], 5).ok
        assert session.run(["touch", "--", *backups, *kept_decoys], 5).ok

        # The backup just made is kept even if its stamp is older (another worker's clock).
        removed = apply_steps.prune_backups(session, path, 2, just_made=backup_of(path, 1))

        assert removed == [backup_of(path, 2), backup_of(path, 3)]
        listing = session.run(["ls", "-A", "--", odd], 5).text.splitlines()
        left = sorted(f"{odd}/{name}" for name in listing)
        assert left == sorted([backup_of(path, 1), backup_of(path, 4), *kept_decoys])
        assert apply_steps.prune_backups(session, path, 2, just_made=backup_of(path, 4)) == []
        assert not session.run(["test", "-e", "/tmp/pifarm-pwned"], 5).ok
        session.run(["rm", "-rf", "--", odd], 5)
