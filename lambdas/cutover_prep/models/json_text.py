"""A user's JSON file, read strictly: what ``json.loads`` lets through silently, or with a traceback,
is one line naming the field.

- A key given twice in one object (``json.loads`` keeps the last one without a word; RFC 8259
  section 4: names SHOULD be unique). The run input's keys are all unique by design.
- ``Infinity``, ``-Infinity``, ``NaN`` (not JSON: RFC 8259 section 6) and numbers beyond the
  largest double (``1e999``, which Python reads as infinity).
- An integer of more digits than CPython converts (``int_max_str_digits``, 4,300 by default:
  ``json.loads`` raises a bare ValueError).

The workflow's ValidateInput gets its input already parsed by Step Functions, so this is for the
files the command line reads; the models refuse non-finite numbers too.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_INT_DIGITS = 4300  # CPython's default int_max_str_digits: json.loads raises beyond it


class _Problem:
    """A value that stands in for what could not be read, until its place in the document is known."""

    def __init__(self, why: str) -> None:
        self.why = why


class _Twice(dict):  # type: ignore[type-arg]
    """An object with a key given more than once."""

    twice: list[str]


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    twice: list[str] = []
    for key, value in pairs:
        if key in out and key not in twice:
            twice.append(key)
        out[key] = value
    if not twice:
        return out
    marked = _Twice(out)
    marked.twice = twice
    return marked


def _int(text: str) -> Any:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _Problem(f"a number of {digits:,} digits is too long (no field takes more than a few digits)")
    return int(text)


def _float(text: str) -> Any:
    value = float(text)
    if math.isinf(value):
        return _Problem(f"{text[:20]}{'…' if len(text) > 20 else ''} is beyond the largest number JSON "
                        "readers agree on (about 1.8e308): write a finite number")
    return value


def _constant(text: str) -> Any:
    return _Problem(f"{text} is not a JSON number (RFC 8259 has no Infinity or NaN): write a finite number")


def _first_problem(doc: Any) -> tuple[tuple[Any, ...], str] | None:
    """Where the first unreadable value or repeated key is, in document order; no recursion."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Problem):
            return path, node.why
        if isinstance(node, _Twice):
            return (*path, node.twice[0]), ("given more than once in the same object (JSON readers keep "
                                            "only the last one): keep one")
        if isinstance(node, dict):
            stack.extend((v, (*path, k)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(node))))
    return None


class JsonProblem(ValueError):
    """A value or key the input must not have: 'warmup.max_concurrency: why' (``path``: keys and indexes)."""

    def __init__(self, path: tuple[Any, ...], why: str) -> None:
        from cutover_prep.models.run_input import _location  # its field names: cut short, control characters escaped

        super().__init__(f"{_location(path)}: {why}")
        self.path, self.why = path, why


def loads(text: str) -> Any:
    """``json.loads`` that raises ``JsonProblem`` (naming where) for a repeated key, a non-finite
    number or an integer too long to convert; ``json.JSONDecodeError`` for text that is not JSON;
    ``RecursionError`` for JSON nested too deeply to parse."""
    doc = json.loads(text, object_pairs_hook=_object, parse_int=_int, parse_float=_float,
                     parse_constant=_constant)
    problem = _first_problem(doc)
    if problem is not None:
        raise JsonProblem(*problem)
    return doc
