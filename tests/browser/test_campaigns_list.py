"""The Campaigns list of a lab with more campaigns than a page holds: the newest first, the
older ones a page further, on a desktop and on a phone."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from benchmarks.models import Campaign
from benchmarks.views.campaigns import CAMPAIGNS_PER_PAGE
from tests.benchmarks.factories import make_campaign
from tests.browser.conftest import screenshot
from tests.browser.test_phone_layout import PHONE, fits_a_phone
from tests.browser.test_register_board import log_in
from tests.devices.factories import make_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_newest_campaign_comes_first_and_the_oldest_a_page_further(
    page, live_server, user, problems
):
    board = make_board("bench-a")
    start = timezone.now() - timedelta(days=1)
    for number in range(CAMPAIGNS_PER_PAGE + 2):
        campaign = make_campaign(board, name=f"campaign {number:03}", states=["done"])
        Campaign.objects.filter(pk=campaign.pk).update(created=start + timedelta(minutes=number))
    log_in(page, live_server, user)
    page.goto(live_server.url + reverse("benchmarks:campaigns"))
    names = page.locator("td.campaign-name")
    expect(names.first).to_have_text(f"campaign {CAMPAIGNS_PER_PAGE + 1:03}")
    expect(names).to_have_count(CAMPAIGNS_PER_PAGE)
    expect(page.locator(".pager-where").first).to_contain_text("campaigns 1–100 of 102")
    page.get_by_role("link", name="Next ›").first.click()
    expect(names).to_have_text(["campaign 001", "campaign 000"])
    screenshot(page, "campaigns-page-2")
    page.set_viewport_size(PHONE)
    fits_a_phone(page)
    screenshot(page, "campaigns-page-2-phone")
    assert problems == [], "\n".join(problems)
