"""The API's JSON parser: DRF's, refusing a body nested too deeply in words (a 400, not a 500)."""

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:  # Python's json reads nesting by recursion: [[[[... 5,000 deep
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        except ParseError as exc:  # Python's own words for a 5,000-digit integer name a hack
            if "Exceeds the limit" in str(exc.detail):
                words = "JSON parse error - a number has more than 4,300 digits."
                raise ParseError(words) from None
            raise
