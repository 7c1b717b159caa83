"""JSON lines for imports: strict JSON (no repeated keys, NaN or Infinity, no number too large for a
float), shallow, and text the databases can store (core.text.unstorable_character); errors name
file, line and field."""

import json
import math
import re
from pathlib import Path

from core.errors import ImportFileError
from core.lines import decode_field
from core.text import unstorable_character

MAX_JSON_DEPTH = 32


class JSONSyntaxError(ImportFileError):
    """A line that is not JSON (as a last line cut off mid-object is not)."""


class JSONValueError(ValueError):
    """JSON text an import refuses although it parses: ``field`` is where in the value (None: the
    whole value), ``message`` why."""

    def __init__(self, field: str | None, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


def _object_without_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise JSONValueError(_key_name(key), "appears twice in one object (which value is meant?)")
        obj[key] = value
    return obj


def _refuse_constant(name: str):
    raise JSONValueError(None, f"holds {name}, which is not a JSON number")


_DECODER = json.JSONDecoder(object_pairs_hook=_object_without_repeated_keys, parse_constant=_refuse_constant)


def json_loads(text: str):
    """One JSON value; raises json.JSONDecodeError for what is not JSON and JSONValueError for
    repeated keys, NaN or Infinity, over-deep nesting, oversized numbers (an integer of more than
    4,300 digits, a float beyond ±1.8e308) and unstorable text."""
    return _checked(lambda: (_DECODER.decode(text), None))[0]


def json_raw_decode(text: str, start: int) -> tuple[object, int]:
    """Like json.JSONDecoder.raw_decode, with json_loads's checks (for readers of JSON streams)."""
    return _checked(lambda: _DECODER.raw_decode(text, start))


def _checked(decode) -> tuple[object, int | None]:
    try:
        value, end = decode()
    except (json.JSONDecodeError, JSONValueError):
        raise
    except RecursionError:
        raise JSONValueError(None, f"is nested too deeply (the limit is {MAX_JSON_DEPTH} levels)") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise JSONValueError(None, f"holds a value that cannot be read ({str(exc).split(':')[0]})") from None
    problem = json_problem(value)
    if problem is not None:
        raise JSONValueError(*problem)
    return value, end


def json_problem(value) -> tuple[str | None, str] | None:
    """``(field, why)`` for the first string or key of ``value`` that breaks the text rule, for a
    float that overflowed to infinity (``1e999999`` parses as ``inf``, which the NaN/Infinity rule
    refuses when spelt out), or for nesting deeper than MAX_JSON_DEPTH; None when there is none.
    Fields read like ``context[1]``."""
    stack = [(value, "", 0)]
    while stack:
        node, where, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            outermost = _OUTERMOST.match(where).group()  # "x" rather than x[0][0]...[0]
            return outermost or None, f"is nested too deeply (the limit is {MAX_JSON_DEPTH} levels)"
        if isinstance(node, str):
            problem = unstorable_character(node)
            if problem:
                return where or None, problem
        elif isinstance(node, float) and not math.isfinite(node):
            return where or None, "is a number too large for a float (it would be read as infinity)"
        elif isinstance(node, dict):
            for key in node:
                problem = unstorable_character(key)
                if problem:
                    return where or None, f"key {_key_name(key)} {problem}"
            stack.extend(
                (child, f"{where}.{_key_name(key)}" if where else _key_name(key), depth + 1)
                for key, child in reversed(node.items())
            )
        elif isinstance(node, list):
            stack.extend((node[i], f"{where}[{i}]", depth + 1) for i in reversed(range(len(node))))
    return None


_OUTERMOST = re.compile(r"[^.\[]*")


def _key_name(key: str) -> str:
    """A key as an error message can show it (escaped unless plain)."""
    return key if key.isidentifier() else ascii(key[:64])


def parse_json_line(data: bytes, *, path: Path | str, line: int, encoding: str = "utf-8"):
    """The line's JSON value (see json_loads); errors name file, line and, where known, field."""
    text = decode_field(data, path=path, line=line, field="(line)", encoding=encoding, check=False)
    try:
        return json_loads(text)
    except json.JSONDecodeError as exc:
        raise JSONSyntaxError(path, line, f"(JSON, column {exc.colno})", f"invalid JSON: {exc.msg}") from None
    except JSONValueError as exc:
        raise ImportFileError(path, line, exc.field, exc.message) from None
