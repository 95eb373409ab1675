"""The run input's field types and their rules: bounded text without control characters, names by the
engines' identifier limits, host names, the strict base model and how a model validator names its field.

The input is strict and bounded: a switch is a JSON boolean (``"yes"`` or ``1`` is not ``true``), a number is
not a boolean or a string, every string and list has a length limit (docs/run-input.md), no string holds a
control character. Each violation is one line naming the field (``models.run_input.error_lines``).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)
from pydantic_core import PydanticCustomError

from cutover_prep.engines.registry import accepted_names, family, identifier_max_chars

SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$")
DB_IDENTIFIER = re.compile(r"^[A-Za-z](?!.*--)[A-Za-z0-9-]{0,62}(?<!-)$")
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$"  # a run id, also an execution name
RUN_ID = re.compile(RUN_ID_PATTERN)


# control characters, surrogates, line/paragraph separators, and format characters (Cf: the invisible
# ones, zero-width spaces and joiners, and the bidirectional controls that make text read otherwise
# than it is stored, e.g. U+202E RIGHT-TO-LEFT OVERRIDE)
_FORBIDDEN_CATEGORIES = ("Cc", "Cs", "Zl", "Zp", "Cf")


def _matching(*fields: str, pattern: re.Pattern[str], message: str) -> Any:
    """A field validator: the value (when given) must match ``pattern`` whole, else ``message``."""
    def check(cls: type, value: str | None) -> str | None:
        if value is not None and not pattern.fullmatch(value):
            raise ValueError(message)
        return value
    return field_validator(*fields)(classmethod(check))


def _no_control(value: str) -> str:
    for i, ch in enumerate(value):
        category = unicodedata.category(ch)
        if category == "Cf":
            raise ValueError(f"holds the invisible format character U+{ord(ch):04X} "
                             f"({unicodedata.name(ch, 'unnamed')}) at position {i + 1}: remove it")
        if category in _FORBIDDEN_CATEGORIES:
            raise ValueError(f"holds the control character U+{ord(ch):04X} at position {i + 1}: remove it")
    return value


def _text(max_length: int, min_length: int = 1, *, strip: bool | None = None) -> Any:
    """A string of ``min_length``..``max_length`` characters without control characters (``strip`` False: kept
    exactly as given, where the model strips the others)."""
    return Annotated[str, StringConstraints(min_length=min_length, max_length=max_length, strip_whitespace=strip),
                     AfterValidator(_no_control)]


# ---- names by the engines' identifier limits (issue 32 §8.4; engines.registry identifier_max_chars) ----------
# What separates the parts of a segment's names ([DATABASE/]SCHEMA.NAME[:PARTITION]#KIND, engines.base.Segment.key)
NAME_SEPARATORS = frozenset("/.:#")


def _glob_atoms(pattern: str) -> list[str | None]:
    """``fnmatch``'s atoms of ``pattern``: None for ``*``, "" for one character of any kind (``?``, a
    ``[...]`` set), else the literal character (a ``[`` without its ``]`` is one, as in fnmatch.translate)."""
    atoms: list[str | None] = []
    i, n = 0, len(pattern)
    while i < n:
        c, i = pattern[i], i + 1
        if c == "*":
            atoms.append(None)
        elif c == "?":
            atoms.append("")
        elif c == "[":
            j = i + (1 if i < n and pattern[i] == "!" else 0)
            j += 1 if j < n and pattern[j] == "]" else 0
            j = pattern.find("]", j)
            if j < 0:
                atoms.append(c)
            else:
                atoms.append("")
                i = j + 1
        else:
            atoms.append(c)
    return atoms


def _longest_part(atoms: list[str | None], *, dotted: bool) -> int:
    """The characters one name must hold for the pattern to match: all of them (one name), or, in a dotted
    pattern, the longest run of plain characters between wildcards and separators (each run lies within one
    name; a wildcard may span a separator, so only plain runs count)."""
    if not dotted:
        return sum(1 for a in atoms if a is not None)
    longest = run = 0
    for a in atoms:
        run = run + 1 if a and a not in NAME_SEPARATORS else 0
        longest = max(longest, run)
    return longest


def _limit_words(engine: str | None) -> tuple[int, str]:
    limit = identifier_max_chars(engine)
    if engine:
        return limit, f"a {family(engine).label} name holds at most {limit}"
    return limit, f"no engine's name holds more than {limit}"


def name_problem(value: str, engine: str | None, *, glob: bool, dotted: bool) -> str | None:
    """Why ``value`` names nothing on ``engine`` (None: on any engine): a name, or each part of a dotted one,
    longer than the engine's identifier limit; a glob whose shortest match is (``dotted``: a run of plain
    characters). None when it may name something."""
    limit, words = _limit_words(engine)
    if glob:
        need = _longest_part(_glob_atoms(value), dotted=dotted)
        if need > limit:
            how = " (its plain characters between wildcards and separators)" if dotted else ""
            return f"can match nothing: it needs a name of at least {need} characters{how}, and {words}"
        return None
    need = max(len(part) for part in (re.split(r"[/.]", value) if dotted else [value]))
    if need > limit:
        return f"{'has a part of' if dotted else 'is'} {need} characters: it names nothing, {words}"
    return None


def _names_problems(prefix: str, values: list[str], engine: str | None, *, glob: bool,
                    dotted: bool) -> list[tuple[str, str]]:
    out = []
    for i, value in enumerate(values):
        problem = name_problem(value, engine, glob=glob, dotted=dotted)
        if problem:
            out.append((f"{prefix}.{i}", problem))
    return out


# a warmup list of globs: (field, dotted: SCHEMA.NAME or a segment key, else one name)
WARMUP_GLOBS = (("databases", False), ("include_schemas", False), ("exclude_schemas", False), ("priority", True))
MAX_PATTERN_CHARS = 512  # a glob may be longer than what it matches ([Aa]...); name_problem is the real bound
# [DATABASE/]SCHEMA.NAME of the longest names any engine holds
MAX_QUALIFIED_NAME_CHARS = 3 * identifier_max_chars() + 2

Name = _text(128)  # database / service names, group names
Pattern = _text(MAX_PATTERN_CHARS)  # a glob of databases, schemas or SCHEMA.NAME
Patterns = Annotated[list[Pattern], Field(max_length=100)]
TagKey = _text(128)
TagValue = _text(256, min_length=0)
Identifier = _text(63)
Arn = _text(2048)
HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")  # RFC 1123 section 2.1
HOST_RULE = ("must be a host name (dot-separated labels of at most 63 letters, digits or hyphens, RFC 1123), "
             "an IPv4 or IPv6 address, or in the local run an absolute socket directory")


def host_problem(value: str) -> str | None:
    """Why ``value`` is not a host name or an address; the value itself is never repeated (a
    ``user:password@host`` would put the password in the error). The one rule of ``target.host`` and of
    every command's ``--dsn`` host (``local.dsn.parse_dsn``)."""
    if value.startswith("/"):  # the local run's socket directory (libpq, pymysql)
        return "a socket directory may not hold ',' (libpq reads it as a list of hosts)" if "," in value else None
    if "@" in value:
        return "holds '@': a user or password belongs in the secret, not in the host; " + HOST_RULE
    if "," in value:
        return "holds ',': give one host (libpq reads a list of hosts and tries each); " + HOST_RULE
    if "%" in value:
        return ("holds '%': an IPv6 zone id (fe80::1%eth0) names an interface of the connecting machine, "
                "not a database host; give the address without it")
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    if ":" in value or value.startswith("["):
        return "holds ':' but is not an IPv6 address: give the port in target.port; " + HOST_RULE
    labels = value.split(".")
    if len(value) > 253 or not all(HOST_LABEL.fullmatch(label) for label in labels):
        return HOST_RULE
    if labels[-1].isdigit():
        return "looks like an IPv4 address but is not one (four numbers 0-255); " + HOST_RULE
    return None


def _host(value: str) -> str:
    problem = host_problem(value)
    if problem:
        raise ValueError(problem)
    return value


# a DNS name (at most 253), an IP address, or a socket directory in the local run
Host = Annotated[_text(255), AfterValidator(_host)]
ShortText = _text(64)
LongText = _text(255)
SnapshotText = _text(400)  # an ARN of a 255-character name; SNAPSHOT_IDENTIFIER is the rule
RunIdText = _text(80)


# A family name (postgres) or an RDS engine name (oracle-ee-cdb), kept as its family's name.
ENGINE_NAMES = accepted_names()
EngineName = Annotated[Literal[ENGINE_NAMES], AfterValidator(lambda v: family(v).name)]


class _Strict(BaseModel):
    # strict: a JSON boolean for a switch, a JSON number (not true, not "8") for a number
    # allow_inf_nan: Infinity, NaN and 1e999 (read as infinity) are not numbers a limit can compare with
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True, allow_inf_nan=False)


def _field_error(field: str, why: str) -> PydanticCustomError:
    """A model validator's error about one of its fields: ``error_lines`` names ``field`` (dotted, relative
    to the model), not the whole model."""
    return PydanticCustomError("field_problem", "{why}", {"field": field, "why": why})
