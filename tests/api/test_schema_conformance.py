"""The API answers as its OpenAPI schema says: schemathesis reads /api/v1/schema/ from a live
server, generates requests for every operation (valid and invalid ones, a bounded number each)
and checks each answer: no server error, a documented status code and content type, a body of
the documented shape. For a token that may see board addresses and for one that may not."""

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import checks
from schemathesis.specs.openapi import checks as openapi_checks

from benchmarks.api import tokens
from benchmarks.models import Comparison
from devices import presets
from devices.models import FactSnapshot, Preset
from tests.benchmarks.factories import add_runs, make_campaign, measure
from tests.devices.factories import make_board

pytestmark = [
    pytest.mark.slow,  # a live server, and hundreds of requests
    pytest.mark.django_db(transaction=True),
]
EXAMPLES = 15  # an operation: enough to reach its refusals, bounded for the suite's time
CHECKS = [
    checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_schema_conformance,
]


@pytest.fixture(params=[False, True], ids=["addresses hidden", "addresses shown"])
def token(request, operator):
    return tokens.issue(operator, "schemathesis", sees_addresses=request.param)[1]


@pytest.fixture
def lab(operator):
    """A board probed and one never probed, a preset with a version nobody authored, a
    campaign with measured runs (one of them with a preset version, one without) and a
    saved comparison nobody owns: the nulls and absences the schema must allow."""
    probed = make_board("bench-a")
    FactSnapshot.objects.create(
        board=probed, model="Raspberry Pi 4 Model B Rev 1.5", revision="d03115", facts={}
    )
    make_board("bench-b", host="10.213.9.12")
    version = presets.new_version(Preset.objects.create(name="mild"), options={"arm_freq": "1800"})
    campaign = make_campaign(probed, name="measured", states=[])
    lane = campaign.lanes.get()
    for run in add_runs(lane, 2, state="done") + add_runs(lane, 1, preset_version=version):
        measure(run, throughput=(412.5, "MB/s"))
    Comparison.objects.create(
        name="nobody's", benchmark="sha1sum", metric="throughput", group_by="preset"
    ).campaigns.set([campaign])
    return campaign


@pytest.fixture
def api_schema(live_server, token, lab):
    return schemathesis.openapi.from_url(
        f"{live_server.url}/api/v1/schema/?format=json",
        headers={"Authorization": f"Bearer {token}"},
    )


def test_the_api_answers_as_its_schema_says(api_schema, token, live_server):
    """Every operation in turn (schemathesis' own pytest plugin predates pytest 9): the
    failures of all of them, each with the request that showed it."""
    failures = []
    for found in api_schema.get_all_operations():
        operation = found.ok()

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],  # a failure as found, not shrunk
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def answers_as_documented(case):
            case.call_and_validate(
                base_url=live_server.url,
                headers={"Authorization": f"Bearer {token}"},
                checks=CHECKS,
            )

        try:
            answers_as_documented()
        except (Exception, BaseExceptionGroup) as failed:  # noqa: BLE001 - reported together
            failures.append(f"{operation.label}: {failed}")
    assert not failures, "\n\n".join(failures)
