"""Every refusal of the API is JSON a script can read, also those Django or the JSON parser
would answer with an HTML page or a 500."""

import pytest
from django.test import Client
from django.urls import reverse

from tests.api.support import Api
from tests.benchmarks.factories import make_campaign
from tests.devices.factories import make_board

pytestmark = pytest.mark.django_db
CAMPAIGNS = reverse("api:campaign-list")


def test_a_body_nested_deeper_than_the_parser_reads_is_a_json_400(client, operator):
    api = Api(client, operator)
    body = "[" * 5000 + "]" * 5000
    response = client.post(CAMPAIGNS, body, content_type="application/json", **api.headers())
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON parse error - the body is nested too deeply."}


def test_more_query_fields_than_allowed_is_a_json_400(client, viewer, settings):
    query = "&".join(f"f{i}=1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    response = client.get(f"{reverse('api:run-list')}?{query}", **Api(client, viewer).headers())
    assert response.status_code == 400
    assert response.json() == {
        "detail": "The request has more than 1,000 fields (PIFARM_UPLOAD_MAX_FIELDS)."
    }


def test_a_token_posting_to_a_path_the_api_lacks_gets_the_json_404_not_a_csrf_page(operator):
    campaign = make_campaign(make_board("bench-a"))
    client = Client(enforce_csrf_checks=True)
    path = reverse("api:campaign-cancel", args=[campaign.code]).removesuffix("/")
    response = client.post(path, **Api(client, operator).headers())
    assert response.status_code == 404
    assert response.json()["detail"].startswith(f"There is no {path} in the API")
