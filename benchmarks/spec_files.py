"""A campaign spec read from a file or standard input, as `manage.py campaign start` reads one.

The API's limits, applied before and while parsing, so that a hostile file is refused in words
within a second: at most PIFARM_UPLOAD_MAX_BYTES (the API's body limit); JSON read as JSON;
anything else read as YAML (whose "1:30" and "off" are text and 1e3 a number, as YAML 1.2
reads them), whose aliases are refused (a few hundred bytes of nested aliases expand to
gigabytes) and whose nesting is counted from the parser's events before a value is built.
What is built then gets specs.check_shape like an API body.
"""

import json
import re
import sys

import yaml
from django.conf import settings

from benchmarks.specs import MAX_DEPTH, MAX_VALUES

# libyaml's parser (PyYAML's wheels have it) reads a large spec several times as fast as the
# pure-Python one, refusals alike.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Plain scalars that YAML 1.1 (PyYAML's) reads otherwise than YAML 1.2 and JSON, the ones a
# spec is likely to hold: "every: 1:30" is 90 (base 60) and "compression: off" is false there,
# while 1e3 is text. A spec means what it shows: the first two stay text, which the spec's
# check then takes or refuses in words, and 1e3 is a number. (Rarer ones still read as 1.1
# does: 010 is 8, 1_000 is 1000, 2026-01-02 is a date.)
_YAML_11_TEXT = re.compile(
    r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"  # sexagesimal
    r"|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF"
)
_EXPONENT_FLOAT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+")


class SpecLoader(_SAFE_LOADER):
    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode and implicit[0]:
            if _YAML_11_TEXT.fullmatch(value):
                return "tag:yaml.org,2002:str"
            if _EXPONENT_FLOAT.fullmatch(value):
                return "tag:yaml.org,2002:float"
        return super().resolve(kind, value, implicit)


_OPENS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSES = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


TOO_LONG_A_NUMBER = "holds a number that cannot be read: more digits than 4,300, or past any float"


class SpecFileError(ValueError):
    """The file cannot be a spec; the message says why (the path is the caller's to add)."""


def read(path: str):
    """The value the spec file at path ("-": standard input) holds, or SpecFileError."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as file:
                raw = file.read(limit + 1)
        text = raw.decode()
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecFileError(f"cannot be read: {exc}") from None
    if len(raw) > limit:
        raise SpecFileError(f"is over {limit:,} bytes (PIFARM_UPLOAD_MAX_BYTES, as the API)")
    try:
        return json.loads(text)
    except RecursionError:
        raise SpecFileError(f"is nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError:
        pass  # not JSON: YAML, a superset, may still read it
    except ValueError:  # an integer past Python's int-conversion limit
        raise SpecFileError(TOO_LONG_A_NUMBER) from None
    return _yaml(text)


def _yaml(text: str):
    depth = values = 0
    try:
        for event in yaml.parse(text, Loader=SpecLoader):
            values += 1  # a list of a million scalars is refused here, before it is built
            if values > MAX_VALUES:
                raise SpecFileError(f"holds more than {MAX_VALUES:,} values")
            if isinstance(event, yaml.AliasEvent):
                raise SpecFileError(
                    f"uses the YAML alias *{event.anchor}: a spec takes none (write the value out)"
                )
            if isinstance(event, _OPENS):
                depth += 1
                if depth > MAX_DEPTH:
                    raise SpecFileError(f"is nested more than {MAX_DEPTH} levels deep")
            elif isinstance(event, _CLOSES):
                depth -= 1
        return yaml.load(text, Loader=SpecLoader)  # noqa: S506 - CSafeLoader or SafeLoader
    except yaml.YAMLError as exc:
        raise SpecFileError(f"is neither JSON nor YAML: {exc}") from None
    except SpecFileError:
        raise
    except (ValueError, OverflowError):  # an integer past Python's int-conversion limit
        raise SpecFileError(TOO_LONG_A_NUMBER) from None
