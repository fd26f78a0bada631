"""What drf-spectacular cannot read from the views, added to the OpenAPI schema once it is made
(a POSTPROCESSING_HOOKS entry): the refusals every operation may answer, and the board fields
that only a token that sees addresses gets."""

from benchmarks.api.serializers import BoardSerializer

DETAIL = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
# A refused filter names its parameter ({"state": ["one of ..."]}); a refused campaign spec
# says what to change in "detail" and names its key in "field" ("" for the spec as a whole).
REFUSED = {
    "type": "object",
    "properties": {"detail": {"type": "string"}, "field": {"type": "string"}},
    "additionalProperties": {
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
    },
}
REFUSALS = {
    "400": ("A query parameter or the body refused, in words.", REFUSED),
    "401": ("No token, or one that is unknown or revoked.", DETAIL),
    "403": ("The token's user lacks the role this needs.", DETAIL),
    "404": ("No such object, or no such page of a list.", DETAIL),
}


def add_refusals_and_address_fields(result, generator, request, public):
    for operations in result["paths"].values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, (words, body) in REFUSALS.items():
                responses.setdefault(
                    code,
                    {"description": words, "content": {"application/json": {"schema": body}}},
                )
    board = result["components"]["schemas"]["Board"]
    board["required"] = [
        name for name in board["required"] if name not in BoardSerializer.ADDRESS_FIELDS
    ]
    for name in BoardSerializer.ADDRESS_FIELDS:
        board["properties"][name]["description"] = "Only for a token that sees board addresses."
    return result
