"""What a custom benchmark's definition must be: its parameters and its pattern, checked
where an admin saves it (benchmarks.models.CustomBenchmark.clean) and where it runs
(benchmarks.catalog.custom)."""

import json
import re

from benchmarks.catalog.spec import Param, ParamError

MAX_PARAM_LENGTH = 200
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


def custom_param(name: str, default: str) -> Param:
    return Param(
        name, "text", default, "a custom parameter", pattern=rf"(?s).{{0,{MAX_PARAM_LENGTH}}}"
    )


def params_problem(params) -> str:
    """Why these cannot be a custom benchmark's parameters; "" if they can. They are text
    (the command reads them from its environment), so each default is a JSON string that its
    parameter accepts: the builder's field then holds it and a campaign may run with it."""
    if not isinstance(params, dict) or not all(PARAM_NAME.fullmatch(str(key)) for key in params):
        return (
            "the parameters must be an object of parameter names (lower-case letters, digits, "
            "_) and their defaults"
        )
    for name, default in sorted(params.items()):
        if not isinstance(default, str):
            written = json.dumps(default)
            number = isinstance(default, int | float) and not isinstance(default, bool)
            example = json.dumps(written) if number else '"64M"'
            shown = written if len(written) <= 40 else written[:39] + "…"
            return f"{name}: the default must be text, in quotes, such as {example}; not {shown}"
        if len(default) > MAX_PARAM_LENGTH:
            return (
                f"{name}: the default is {len(default)} characters long; a parameter holds at "
                f"most {MAX_PARAM_LENGTH}"
            )
        try:
            custom_param(name, default).clean(None)
        except ParamError as exc:
            return str(exc)
    return ""


def pattern_problem(pattern: str) -> str:
    """Why a pattern cannot be a custom benchmark's parser; "" if it can."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return f"it is not a valid regular expression: {exc}"
    if "value" not in compiled.groupindex:
        return "it needs a named group for the number: (?P<value>...)"
    return ""
