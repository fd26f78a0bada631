"""pifarm's JSON API for scripts (Django REST framework), under /api/v1/.

A person makes a token on the API tokens page; a script sends it as `Authorization: Bearer
<token>` and acts with its owner's role, as the pages do. What the pages keep from view stays
hidden here too, and more: board addresses are shown only to a token made to see them
(benchmarks.api.redact).
"""
