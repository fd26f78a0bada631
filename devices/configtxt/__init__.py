"""config.txt: parse, validate, render and diff. Pure functions: no Django, no I/O.

parse() keeps every line's exact text, so render(parse(data)) == data for any file pifarm has
not changed.
"""

from devices.configtxt.parsing import ConfigFile, Line, parse, render

__all__ = ["ConfigFile", "Line", "parse", "render"]
