"""The catalog page: every benchmark, built in or custom, with what it measures and needs."""

from dataclasses import replace

import pytest
from django.urls import reverse

from benchmarks import catalog, results
from benchmarks.catalog.cpu import SHA1SUM
from benchmarks.catalog.spec import Param
from tests.benchmarks.factories import custom_benchmark, unusable_custom_benchmark

pytestmark = pytest.mark.django_db
CATALOG = reverse("benchmarks:catalog")


def test_the_catalog_needs_a_login(client):
    response = client.get(CATALOG)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_each_built_in_benchmark_is_described(client, viewer):
    client.force_login(viewer)
    body = client.get(CATALOG).content.decode()
    for benchmark in catalog.BUILT_IN.values():
        section = body[body.index(f'id="benchmark-{benchmark.name}"') :]
        section = section[: section.index("</section>")]
        assert benchmark.title in section
        assert f"v{benchmark.version}" in section
        for metric in benchmark.metrics:
            assert f"<strong>{metric.name}</strong> in {metric.unit}, {metric.direction}" in section
        for param in benchmark.params:
            assert f'<code>{param.name}</code> <span class="tag">{param.kind}</span>' in section
            shown = results.value_text(param.default)
            assert f"default {f'<code>{shown}</code>' if shown else '<em>empty</em>'}" in section
        for tool in benchmark.tools:
            assert tool in section
        for package in benchmark.packages:
            assert package in section
        assert f"{benchmark.repetitions} by default" in section


def test_a_custom_benchmark_is_listed_with_its_parameters(client, viewer):
    custom_benchmark(
        "my-dd",
        "dd",
        title="dd to RAM <fast>",
        params={"count": "8"},
        pattern="(?P<value>[0-9.]+) MB/s",
        unit="MB/s",
        tools="dd",
    )
    client.force_login(viewer)
    body = client.get(CATALOG).content.decode()
    section = body[body.index('id="benchmark-my-dd"') :]
    assert "dd to RAM &lt;fast&gt;" in section
    assert "<code>count</code>" in section and "default <code>8</code>" in section
    assert "defined by an admin" in section


def test_a_custom_benchmark_that_cannot_be_used_leaves_the_others_listed(client, viewer):
    unusable_custom_benchmark("nulldef")
    client.force_login(viewer)
    response = client.get(CATALOG)
    assert response.status_code == 200
    assert 'id="benchmark-sha1sum"' in response.content.decode()


def test_the_catalog_is_read_only(client, viewer):
    client.force_login(viewer)
    assert client.post(CATALOG).status_code == 405


def test_parameters_of_every_kind_read_as_words(client, viewer, monkeypatch):
    listed = replace(
        SHA1SUM,
        name="kinds",
        params=(
            Param("modes", "multichoice", ["tx", "rx"], choices=("tx", "rx", "bidir")),
            Param("pin", "bool", True),
            Param("threads", "int", 2, min=1, max=8),
            Param("block", "size", "4K", min=512, max=64 * 1024**2),
            Param("directory", "text", ""),
        ),
    )
    monkeypatch.setitem(catalog.BUILT_IN, listed.name, listed)
    client.force_login(viewer)
    body = client.get(CATALOG).content.decode()
    section = body[body.index('id="benchmark-kinds"') :]
    assert "default <code>tx+rx</code>" in section and "any of tx, rx, bidir" in section
    assert "default <code>on</code>" in section
    assert "a whole number, from 1 to 8" in section
    assert "from 512 to 64M" in section  # in the units the field takes
    assert "default <em>empty</em>" in section
