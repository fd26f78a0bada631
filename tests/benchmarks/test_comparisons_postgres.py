"""A comparison on PostgreSQL, as a team's server runs it: the values of JSON keys (a
parameter grouped by, the link a run recorded) read as on SQLite. PostgreSQL gives them as
JSON text, which made a cipher's group '"AES-256-CBC"' and no line rate a number.

In a manage.py process of its own on a new database (the suite's own database is SQLite)."""

import json

import pytest

from pifarm import embedded_redis
from tests.postgres import POSTGRES_URL, answers, manage
from tests.processes import inherited_environment

pytestmark = pytest.mark.skipif(
    not answers(POSTGRES_URL), reason="no PostgreSQL on localhost to compare on"
)
COMPARED = """
import json
from benchmarks import comparisons
from benchmarks.models import Campaign
from tests.benchmarks.factories import lane_on, trials

campaign = Campaign.objects.create(name="ciphers", spec={})
lane = lane_on(campaign, "team-pi")
link = {"link": {"device": "eth0", "mbit": 100, "mtu": 1500}}
for cipher, values in (("AES-256-CBC", [9.0, 9.2, 9.1]), ("CHACHA20-POLY1305", [7.0, 7.1, 7.2])):
    params = {"cipher": cipher, "size": "50M", "compression": "off", "mtu": 1400}
    trials(lane, values, benchmark="openvpn-scp", unit="MB/s", params=params,
           environment=link)
runs = comparisons.runs_selected([campaign.pk])
found = {}
for group_by in ("param:cipher", "param:mtu"):
    result = comparisons.compare(runs, "openvpn-scp", "throughput", group_by)
    found[group_by] = {"groups": [group.key for group in result.groups],
                       "line rate": result.references.line_rate,
                       "ceiling": result.references.ceiling}
print(json.dumps(found))
"""


@pytest.mark.slow
def test_a_comparison_on_postgresql_reads_parameters_and_links_as_on_sqlite(
    team_database, tmp_path
):
    env = {
        **inherited_environment(),
        "PIFARM_DATA_DIR": str(tmp_path),
        "DATABASE_URL": team_database,
    }
    try:
        manage(env, "migrate", "-v0")
        found = json.loads(manage(env, "shell", "-c", COMPARED).strip().splitlines()[-1])
    finally:
        embedded_redis.stop(tmp_path)  # the processes' own, which outlives them by design
    ciphers, mtus = found["param:cipher"], found["param:mtu"]
    assert ciphers["groups"] == ["AES-256-CBC", "CHACHA20-POLY1305"]
    assert mtus["groups"] == ["1400"]
    # 100 Mbit/s in MB/s, and its TCP goodput ceiling at the runs' own MTU of 1400
    assert ciphers["line rate"] == mtus["line rate"] == 12.5
    assert ciphers["ceiling"] == pytest.approx(100 * 1348 / 1438 / 8)
