"""/api/v1/: the endpoints, the OpenAPI schema and its docs page (Swagger UI, served here)."""

from csp.constants import SELF
from csp.decorators import csp_replace
from django.contrib.auth.decorators import login_required
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import SimpleRouter

from benchmarks.api import errors, views

app_name = "api"


class DocsView(SpectacularSwaggerSplitView):
    """Swagger UI with its start-up script in a file of its own (the CSP runs no inline
    script) and no inline style block (benchmarks/api_docs.html)."""

    template_name = "benchmarks/api_docs.html"
    url_name = "api:schema"


# Swagger UI's stylesheet draws its icons (arrows, the lock) as data: SVG images. This page
# alone may show those; scripts and styles stay pifarm's own, as everywhere.
DOCS_POLICY = {"img-src": [SELF, "data:"]}

router = SimpleRouter()
router.register("boards", views.BoardViewSet, basename="board")
router.register("presets", views.PresetViewSet, basename="preset")
router.register("campaigns", views.CampaignViewSet, basename="campaign")
router.register("runs", views.RunViewSet, basename="run")
router.register("measurements", views.MeasurementViewSet, basename="measurement")
router.register("comparisons", views.ComparisonViewSet, basename="comparison")

urlpatterns = [
    *router.urls,
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # A person reads the docs: one not logged in is sent to the login page, not given a 401.
    path("docs/", csp_replace(DOCS_POLICY)(login_required(DocsView.as_view())), name="docs"),
    re_path(r"^.*$", errors.no_such_endpoint, name="no_such_endpoint"),  # last
]
