"""The execution input of the warm-up workflow, validated with pydantic.

Everything but the target and its secret has a default. Unknown fields are rejected so
a typo ("max_concurency") is an error, not a silently ignored option. The secret itself
never appears here: only its ARN.

The input is strict and bounded: a switch is a JSON boolean (``"yes"`` or ``1`` is not
``true``), a number is not a boolean or a string, every string and list has a length
limit (docs/run-input.md), no string holds a control character, and the input is at most
``MAX_DEPTH`` levels deep. Each violation is one line naming the field.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StringConstraints,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from cutover_prep.engines.registry import accepted_names, family, hot_set_engine_problem, identifier_max_chars
from cutover_prep.models.storage_limits import storage_problem
from cutover_prep.workflows import DEPLOYMENT_TAG, RESERVED_TAG_PREFIX

INSTANCE_CLASS = re.compile(r"^db\.[a-z0-9-]+\.[a-z0-9]+$")
SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$")
DB_IDENTIFIER = re.compile(r"^[A-Za-z](?!.*--)[A-Za-z0-9-]{0,62}(?<!-)$")
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$"  # a run id, also an execution name
RUN_ID = re.compile(RUN_ID_PATTERN)
_SNAPSHOT_NAME = r"(?:rds:|awsbackup:)?[A-Za-z](?:[A-Za-z0-9]|-(?!-)){0,254}(?<!-)"
SNAPSHOT_IDENTIFIER = re.compile(
    rf"(?:arn:aws[a-z-]*:rds:[a-z0-9-]+:\d{{12}}:snapshot:)?{_SNAPSHOT_NAME}")
SUBNET_GROUP = re.compile(r"[A-Za-z0-9._ -]{1,255}")
GROUP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9.:_-]{0,254}")  # default.postgres16, default:oracle-ee-19
TAG_TEXT = re.compile(r"[\w\s.:/=+\-@]*")  # what RDS accepts in tag keys and values
RUN_TAG = "cutover-prep:run-id"  # set by the run on the instance it restores (rds.RUN_TAG)
MAX_TAGS = 48  # RDS allows 50 per instance; the run adds RUN_TAG and DEPLOYMENT_TAG
MAX_DEPTH = 16  # the run input itself is 3 levels deep (restore.tags.KEY)
MAX_PROBLEMS = 10  # problems listed in one error; the rest are counted
# control characters, surrogates, line/paragraph separators, and format characters (Cf: the invisible
# ones, zero-width spaces and joiners, and the bidirectional controls that make text read otherwise
# than it is stored, e.g. U+202E RIGHT-TO-LEFT OVERRIDE)
_FORBIDDEN_CATEGORIES = ("Cc", "Cs", "Zl", "Zp", "Cf")


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN of the state machine's execution called ``name``."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":" + name


EXECUTION_ARN = re.compile(r"^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[^\s:]{1,80}:[^\s:]{1,80}$")
_ARN_PLACE = re.compile(r"^arn:(?P<partition>aws[a-z-]*):[a-z0-9-]*:(?P<region>[a-z0-9-]*):(?P<account>\d{12})?:")


@dataclass(frozen=True)
class AwsPlace:
    """Where a deployment runs: partition, region, account; None where it is not known."""

    partition: str | None = None
    region: str | None = None
    account: str | None = None

    @classmethod
    def of_arn(cls, arn: str | None) -> AwsPlace:
        """The place an ARN names (``arn:PARTITION:SERVICE:REGION:ACCOUNT:...``)."""
        m = _ARN_PLACE.match(arn or "")
        if not m:
            return cls()
        return cls(m["partition"], m["region"] or None, m["account"] or None)


def check_started_by(started_by: str | None, deployment: AwsPlace | None) -> None:
    """The execution that starts a run is one of its own deployment's: same partition, region, account."""
    if not started_by or deployment is None:
        return
    theirs = AwsPlace.of_arn(started_by)
    for part in ("partition", "region", "account"):
        mine, other = getattr(deployment, part), getattr(theirs, part)
        if mine and other != mine:
            raise InvalidInput(f"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: names an execution in {part} {other}, "
                               f"but this deployment is in {part} {mine}: only an execution of the same deployment "
                               "starts its runs (a comparison sets the field itself); remove the field")


def _matching(*fields: str, pattern: re.Pattern[str], message: str) -> Any:
    """A field validator: the value (when given) must match ``pattern`` whole, else ``message``."""
    def check(cls: type, value: str | None) -> str | None:
        if value is not None and not pattern.fullmatch(value):
            raise ValueError(message)
        return value
    return field_validator(*fields)(classmethod(check))


class InvalidInput(Exception):
    """The execution input is wrong; the message names the field and how to fix it.

    ``problems`` holds one line per bad field ("field: why"); the message joins them with "; ".
    """

    error_type = "InvalidInput"

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


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
    every command's ``--dsn`` host (``local.runner.parse_dsn``)."""
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


def _database_choice_tag(value: Any) -> str | None:
    return "<all>" if value == "all" else "<names>" if isinstance(value, list) else None


# target.databases: a list of names, or "all" (issue 33 §1); the tags are left out of an error's location (_loc)
DATABASE_CHOICE_TAGS = ("<names>", "<all>")
DatabaseChoice = Annotated[
    Annotated[Annotated[list[Name], Field(min_length=1, max_length=100)], Tag("<names>")]
    | Annotated[Literal["all"], Tag("<all>")],
    Discriminator(_database_choice_tag, custom_error_type="database_choice",
                  custom_error_message='must be "all" or a list of database names')]


class Target(_Strict):
    db_instance_identifier: Identifier = Field(description="The RDS DB instance to warm (or to create by restore).")
    secret_arn: Arn = Field(description="Secrets Manager ARN of the database credentials.")
    engine: EngineName | None = Field(
        default=None, description="Engine family, or an RDS engine name (e.g. oracle-ee-cdb) that is kept as its "
        "family; default: from the RDS instance.")
    database: Name | None = Field(
        default=None, description="Database (PostgreSQL), database/schema (MySQL, MariaDB) or service name "
        "(Oracle) to connect to; default: from the secret. Naming it (PostgreSQL, MySQL, MariaDB) also selects it: "
        "the run reads that database only, unless databases or warmup.databases says otherwise.")
    databases: DatabaseChoice | None = Field(
        default=None, description="The databases to read (MySQL, MariaDB: schemas), by name; \"all\": every "
        "database on the instance. Default: the one target.database names, else warmup.databases, else all "
        "(the whole restored instance). What is left out is named in the census as waived (docs/run-input.md).")
    host: Host | None = Field(
        default=None, description="Connect here instead of the instance endpoint (tunnel, proxy, local run); "
        "in AWS it must be in the deployment's allowed_db_hosts.")
    port: Annotated[int, Field(ge=1, le=65535)] | None = None

    _identifier = _matching("db_instance_identifier", pattern=DB_IDENTIFIER, message=(
        "must be 1-63 letters, digits or hyphens, start with a letter, no double or trailing hyphen"))
    _arn = _matching("secret_arn", pattern=SECRET_ARN, message=(
        "must be a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME); "
        "never the secret itself"))


class Restore(_Strict):
    snapshot_identifier: SnapshotText = Field(
        description="DB snapshot name (rds:NAME for an automated one) or, for a shared snapshot, its ARN.")
    db_instance_class: ShortText | None = None
    storage_type: Literal["gp2", "gp3", "io1", "io2", "standard"] | None = None
    iops: Annotated[int, Field(ge=1000, le=256000)] | None = None
    storage_throughput: Annotated[int, Field(ge=125, le=4000)] | None = None
    allocated_gb: Annotated[int, Field(ge=20, le=65536)] | None = Field(
        default=None, description="Allocated storage of the restored instance, GiB (AllocatedStorage); default: "
        "the snapshot's. Larger than the snapshot's only: RDS cannot restore onto less storage.")
    db_subnet_group_name: LongText | None = None
    vpc_security_group_ids: list[ShortText] = Field(default_factory=list, max_length=16)
    db_parameter_group_name: LongText | None = None
    option_group_name: LongText | None = None
    multi_az: bool = False
    tags: dict[TagKey, TagValue] = Field(
        default_factory=dict, max_length=MAX_TAGS,
        description=f"Tags of the restored instance: at most {MAX_TAGS} (RDS allows 50; the run adds {RUN_TAG} "
        f"and {DEPLOYMENT_TAG}). Keys starting {RESERVED_TAG_PREFIX} are reserved: only the service sets them.")
    poll_seconds: Annotated[int, Field(ge=5, le=3600)] = 60
    max_wait_minutes: Annotated[int, Field(ge=1, le=24 * 60)] = 180

    _snapshot = _matching("snapshot_identifier", pattern=SNAPSHOT_IDENTIFIER, message=(
        "must be a DB snapshot identifier (1-255 letters, digits or hyphens, starting with a letter, no double "
        "or trailing hyphen; automated: rds:NAME) or, for a shared snapshot, its ARN "
        "(arn:aws:rds:REGION:ACCOUNT:snapshot:NAME)"))

    _subnet_group = _matching("db_subnet_group_name", pattern=SUBNET_GROUP,
                              message="must be 1-255 letters, digits, spaces, '.', '_' or '-'")
    _group = _matching("db_parameter_group_name", "option_group_name", pattern=GROUP_NAME,
                       message="must be 1-255 letters, digits, '.', ':', '_' or '-', starting with a letter")

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            if key.lower().startswith("aws:"):
                raise ValueError(f"tag keys may not start with aws: (reserved by AWS): {key[:128]!r}")
            if key.lower().startswith(RESERVED_TAG_PREFIX):  # in any case: no look-alike keys either
                raise ValueError(f"tag keys starting {RESERVED_TAG_PREFIX} are reserved: the service sets them "
                                 f"(it marks what it restored and deletes by them); remove {key[:128]!r}")
            if not TAG_TEXT.fullmatch(key) or not TAG_TEXT.fullmatch(value):
                raise ValueError(f"tag {key!r}: keys and values may hold letters, digits, spaces and _ . : / = + - @")
        return v

    _class = _matching("db_instance_class", pattern=INSTANCE_CLASS, message="must look like db.r6i.large")

    @field_validator("vpc_security_group_ids")
    @classmethod
    def _sgs(cls, v: list[str]) -> list[str]:
        seen: set[str] = set()
        for sg in v:
            if not re.match(r"^sg-[0-9a-f]{8,17}$", sg):
                raise ValueError(f"{sg!r} is not a security group id (sg-...)")
            if sg in seen:
                raise ValueError(f"{sg} is given twice: list each security group once")
            seen.add(sg)
        return v

    @model_validator(mode="after")
    def _storage(self) -> Restore:
        """What RDS accepts for the storage type (models/storage_limits.py), for any engine; RunInput
        checks again with the engine when target.engine names it."""
        problem = storage_problem(self.storage_type, self.allocated_gb, self.iops, self.storage_throughput)
        if problem:
            raise _field_error(*problem)
        return self


MAX_HOT_SET_NAMES = 500  # the segments a hot set names
MAX_HOT_SET_CHARS = 48 * 1024  # their characters in all: the input crosses Step Functions (256 KiB)
# A segment name in a hot set: the one type of the profile file (hotset.Relation.segments) and of the run
# input (HotSet.names), so `cutover-prep hotset` never writes a name the run refuses (issue 32 §8).
# Exact, so not stripped: a quoted identifier may begin or end with a space (PostgreSQL "t ").
HotSetName = _text(MAX_QUALIFIED_NAME_CHARS, strip=False)


class HotSet(_Strict):
    """``warmup.hot_set``: a hot-set profile's relations (``cutover-prep hotset``), read right after
    ``warmup.priority`` and before the rest. Filled from the file by ``local/start/profile put --hotset FILE``."""

    engine: ShortText = Field(description="The engine the profile was taken on (the names follow its discovery).")
    server: LongText = Field(description="The server the statistics were read on, for the findings.")
    taken_at: ShortText = Field(description="When the profile was taken (ISO 8601).")
    sources: list[LongText] = Field(min_length=1, max_length=2, description="The statistics it ranked by, "
                                    "in order (statistics: VIEWS; awr: VIEWS).")
    relations: Annotated[int, Field(ge=0, le=MAX_HOT_SET_NAMES)] = Field(
        description="How many relations of the profile the names come from.")
    names: list[HotSetName] = Field(
        min_length=1, max_length=MAX_HOT_SET_NAMES, description="Exact segment names, hottest first: "
        "[DATABASE/]SCHEMA.NAME as the run's discovery names segments (not globs).")

    @field_validator("names")
    @classmethod
    def _bounded(cls, v: list[str]) -> list[str]:
        if sum(len(n) for n in v) > MAX_HOT_SET_CHARS:
            raise ValueError(f"at most {MAX_HOT_SET_CHARS} characters in all: take the profile with a smaller --top")
        return v

    @model_validator(mode="after")
    def _names_of_its_engine(self) -> HotSet:
        """Each part of a name within the identifier limit of the engine the profile was taken on."""
        try:
            engine: str | None = family(self.engine).name
        except ValueError:  # an engine no family covers: the run refuses it against the target's
            engine = None
        for field, problem in _names_problems("names", self.names, engine, glob=False, dotted=True)[:1]:
            raise _field_error(field, problem)
        return self


class AfterHotSet(_Strict):
    """``warmup.after_hot_set``: once every unit of the hot set is read, no more than ``max_concurrency``
    units read at once (the volume given back to the application; decision 51)."""

    max_concurrency: Annotated[int, Field(ge=1, le=1000)] = Field(
        description="Units reading at once after the hot set is warm (those reading then finish their unit; "
        "no new one starts until fewer than this read).")


class Yielding(_Strict):
    """``warmup.yielding``: the warm-up gives way to the application (issue 36 §1). Once the hot set is warm
    (from the start without one), the units reading at once follow the application's reads on the database's
    own counters: all of max_concurrency while it reads little, additive increase / multiplicative decrease on
    its read latency while it reads."""

    enabled: bool = Field(
        default=True, description="Yield to the application once the hot set is warm (false: read the rest at "
        "full concurrency, or at after_hot_set's).")
    window_seconds: Annotated[float, Field(ge=0.5, le=600)] = Field(
        default=2.0, description="Seconds between two decisions (each reads the server's counters once).")
    latency_factor: Annotated[float, Field(ge=1, le=100)] = Field(
        default=1.5, description="The application's read latency above this many times its least of the "
        "recent windows halves the warm-up's concurrency (decrease); within it, one more unit reads.")
    min_reads_per_second: Annotated[float, Field(ge=0, le=1_000_000)] = Field(
        default=10.0, description="Below this many blocks a second read by other sessions the application "
        "counts as idle: the warm-up reads at full concurrency.")
    decrease: Annotated[float, Field(gt=0, lt=1)] = Field(
        default=0.5, description="The factor a decrease multiplies the concurrency by (at least 1 unit reads).")


class Warmup(_Strict):
    enabled: bool = Field(
        default=True, description="false: measure the storage as restored, reading nothing before the probes and "
        "the sweep (a comparison of cold configurations). The verdict is then NOT_READY (WARMUP_OFF): a database "
        "nobody warmed is not ready for a cutover.")
    max_concurrency: Annotated[int, Field(ge=1, le=1000)] = 8
    databases: Patterns = Field(default_factory=list)
    include_schemas: Patterns = Field(default_factory=list)
    exclude_schemas: Patterns = Field(default_factory=list)
    include_system: bool = Field(
        default=False, description="Oracle, MySQL/MariaDB: also read the system schemas. PostgreSQL reads its "
        "catalogues (pg_catalog with pg_largeobject, information_schema) whatever this says: they are on the "
        "volume; exclude_schemas may leave them out, a waiver the findings name.")
    priority: Patterns = Field(default_factory=list)
    hot_set: HotSet | None = Field(
        default=None, description="A hot-set profile's relations (cutover-prep hotset): read after the priority "
        "patterns' units and before the rest; the findings' hot_set section says when they were all read.")
    after_hot_set: AfterHotSet | None = Field(
        default=None, description="Once every unit of hot_set is read, read the rest with at most this many "
        "units at once, so the application finds the volume's IOPS free (issue 23 §1). Without it (the default) "
        "the rest is read at the run's full concurrency, the whole warm-up as fast as it goes.")
    yielding: Yielding = Field(
        default_factory=Yielding, description="The warm-up as a background job: once the hot set is warm it "
        "gives way while the application reads (docs/yielding.md).")
    unit_mb: Annotated[int, Field(ge=1, le=100_000)] | None = None
    assumed_cold_mib_per_s: Annotated[float, Field(gt=0, le=10_000)] = 8.0
    production_size_gb: Annotated[float, Field(gt=0, le=1_000_000)] | None = Field(
        default=None, description="Size of the production database (GiB) when the run warms a smaller copy: the "
        "report then projects the time to warm it at the measured rate.")
    chunk_mb: Annotated[int, Field(ge=1, le=4096)] = 64
    create_extension: bool = False
    wait_seconds: Annotated[int, Field(ge=0, le=3600)] = 30
    reconnect_minutes: Annotated[float, Field(gt=0, le=120)] = Field(
        default=10, description="How long a unit waits out a database that dropped its session or does not "
        "answer (a restart, a reboot, a Multi-AZ failover, a Blue/Green switchover), reconnecting with jittered "
        "backoff, before it fails by name (DatabaseUnreachable); an outage longer than one invocation goes on in "
        "the next, from the unit's last committed chunk. The findings' reconnects say how often and how long.")
    adaptive: bool = Field(
        default=False, description="Start the warm-up at adaptive_start units at once and double that while the "
        "aggregate read rate grows by more than adaptive_margin_pct per window; hold where it stops growing "
        "(never above max_concurrency). false (the default until it is measured in AWS: every local "
        "measurement was slower than a fixed level): max_concurrency from the start.")
    adaptive_start: Annotated[int, Field(ge=1, le=1000)] = 2
    adaptive_margin_pct: Annotated[float, Field(ge=0, le=100)] = 10
    adaptive_window_seconds: Annotated[float, Field(ge=1, le=3600)] = Field(
        default=120, description="The longest a concurrency level is measured before the next decision.")
    adaptive_window_chunks: Annotated[int, Field(ge=0, le=1000)] = Field(
        default=8, description="A window also ends once the units have committed this many chunks per slot "
        "(0: windows end by time only).")
    mode: Literal["segments", "datafiles", "both"] = Field(
        default="segments", description="segments: read each table, index and LOB segment; datafiles: read every "
        "datafile block by block range instead (engines that offer it: Oracle); both: segments that fit a unit, "
        "then the datafile pass (which also reads the segments too big for one unit).")

    @model_validator(mode="after")
    def _globs_can_match(self) -> Warmup:
        """No glob that needs a longer name than any engine holds (RunInput checks by the target's engine)."""
        for name, dotted in WARMUP_GLOBS:
            for field, problem in _names_problems(name, getattr(self, name), None, glob=True, dotted=dotted)[:1]:
                raise _field_error(field, problem)
        return self


class Benchmark(_Strict):
    """Probes before and after the warm-up, then the sweep; each point runs alone."""

    enabled: bool = Field(default=True, description="Run the probes and the benchmark sweep after the warm-up.")
    probe_blocks: Annotated[int, Field(ge=0, le=100_000)] = Field(
        default=500, description="Blocks in the cold/warm probe sample (0: no probes).")
    probe_max_seconds: Annotated[float, Field(gt=0, le=600)] = 60
    seconds_per_point: Annotated[float, Field(ge=1, le=600)] = Field(
        default=20, description="Duration of each sweep point; use 60+ to read CloudWatch per point.")
    mbrc_values: list[Annotated[int, Field(ge=1, le=1024)]] = Field(
        default_factory=lambda: [1, 2, 4, 8, 16, 32, 64, 128], max_length=16,
        description="Oracle: db_file_multiblock_read_count values of the IO-size sweep.")
    io_combine_kb_values: list[Annotated[int, Field(ge=8, le=1024)]] = Field(
        default_factory=lambda: [8, 16, 32, 64, 128, 256], max_length=16,
        description="PostgreSQL 17+: io_combine_limit values (kB) of the IO-size sweep.")
    sessions: list[Annotated[int, Field(ge=1, le=64)]] = Field(
        default_factory=lambda: [1, 2, 4, 8], max_length=16,
        description="Sessions of the random single-block read points.")
    write_test: bool = Field(default=False, description="Opt-in write points in a scratch schema, dropped after.")
    write_max_mib: Annotated[int, Field(ge=1, le=102_400)] = Field(
        default=256, description="Cap on what the opt-in write points write, MiB")
    write_max_free_storage_pct: Annotated[float, Field(gt=0, le=50)] = Field(
        default=5, description="The opt-in write points write never more than this share of the free storage "
        "RDS reports (percent)")
    metrics_wait_minutes: Annotated[int, Field(ge=0, le=60)] = Field(
        default=10, description="How long to wait for CloudWatch datapoints before recording them missing.")
    metrics_poll_seconds: Annotated[int, Field(ge=10, le=600)] = 60
    compare_limits: bool = Field(
        default=True, description="Compare with the published limits of the instance class and storage "
        "(false when the database read is not that RDS instance, e.g. the local run).")


class Preflight(_Strict):
    """The preflight state right after Discover (``cutover-prep preflight`` on the run's target)."""

    enabled: bool = Field(
        default=True, description="Prove each grant and read method the plan needs on the target (about a "
        "minute, read-only) before anything is warmed; the report is evidence preflight.json and a findings section.")
    on_failure: Literal["fail", "warn"] = Field(
        default="fail", description="fail: a failed check ends the run FAILED (PreflightFailed, naming each "
        "failed check) before any unit is read; warn: the failed checks are recorded and the run goes on.")


def with_defaults(model: type[BaseModel], section: dict[str, Any] | None) -> dict[str, Any]:
    """A section of the run input read back as JSON (the run context, the run item), its missing fields filled
    with ``model``'s defaults: each default is written once, in the model (a section whose every field has one:
    ``Warmup``, ``Benchmark``, ``Thresholds``, ``Preflight``)."""
    return {**model().model_dump(mode="json"), **(section or {})}


# The rules that read these thresholds are verdict.py's.
class Thresholds(BaseModel):
    """The run input's ``verdict`` section."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # Infinity/NaN cannot be a threshold

    min_coverage_pct: float = Field(default=100.0, ge=0, le=100, description="Planned bytes read, at least.")
    require_benchmark: StrictBool = Field(default=True, description="NOT_READY when the probes/sweep were asked for "
                                    "and are missing or failed.")
    max_warm_to_cold_latency: float = Field(
        default=1.25, gt=0, description="Noise allowance: a warm median read above this × the cold one (and more "
        "than latency_noise_ms above it) is slower than cold, which fails WARM_VS_COLD.")
    fast_read_ms: float = Field(
        default=1.0, ge=0, description="A median single-block read at or below this is fast: a cold probe above it "
        "measured a first-touch penalty, a warm probe at or below it shows the penalty gone.")
    min_warm_speedup: float = Field(
        default=2.0, ge=1, description="When the cold probe measured a penalty, a warm median above fast_read_ms "
        "still passes when the cold median is at least this many times the warm one.")
    latency_noise_ms: float = Field(
        default=0.2, ge=0, description="Two medians closer than this are alike whatever their ratio (round-trip "
        "jitter of fast reads).")
    max_warm_p99_ms: float | None = Field(default=None, gt=0, description="Warm probe p99 read latency limit (ms).")
    expected_read_iops: float | None = Field(default=None, gt=0, description="Best random-read IOPS, at least.")
    expected_read_mibps: float | None = Field(default=None, gt=0, description="Best read throughput (MiB/s), at least.")
    tolerance_pct: float = Field(default=10.0, ge=0, le=100, description="Slack for expected values and baselines.")
    baseline_run_id: str | None = Field(default=None, pattern=RUN_ID_PATTERN,
                                        description="Compare with this earlier, finished run's findings.")
    max_unread_bytes: int = Field(
        default=0, ge=0, description="Bytes on the volume (the census of everything the engine can name) the run "
        "may leave unread without a waiver, at most; above it UNREAD_OBJECTS fails. Objects the input's database "
        "or schema selection excludes are waived and do not count.")
    require_storage_initialized: StrictBool = Field(
        default=False, description="NOT_READY while RDS still reports a storage operation (StorageOperationStatus, "
        "e.g. Initializing) at the end of the run, or when its storage progress could not be read.")
    engine_internal: Literal["named", "strict"] = Field(
        default="named", description="The engine's own files that no SQL reads and no application query touches "
        "(InnoDB's system, undo and temporary tablespaces, free extents, the redo log), counted apart from "
        "max_unread_bytes: covered when RDS says the whole volume is initialized (StorageOperationStatus reported, "
        "then gone). named: otherwise named with their bytes, not failing the verdict (a local run: always); "
        "strict: otherwise NOT_READY (ENGINE_INTERNAL).")

    @field_validator("min_coverage_pct")
    @classmethod
    def _a_percent_not_a_fraction(cls, value: float) -> float:
        """0.95 is 0.95 %, almost surely a fraction typed for 95 %: refused, so a run is never judged READY on
        a threshold its author did not mean (0 stays allowed: coverage not judged)."""
        if 0 < value <= 1:
            raise ValueError(f"is a percent from 0 to 100: {value:g} would mean {value:g} %; for "
                             f"{value * 100:g} % write {value * 100:g}")
        return value


class ComparisonLink(_Strict):
    """What a comparison puts in the input of each child run it starts; never set it yourself."""

    comparison_id: RunIdText
    ttl_hours: Annotated[int, Field(ge=1, le=72)]

    _comparison_id = _matching("comparison_id", pattern=RUN_ID, message=(
        "must be 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit"))


class RunInput(_Strict):
    """What a user passes to start a run (console, CLI, EventBridge)."""

    target: Target
    restore: Restore | None = None
    warmup: Warmup = Field(default_factory=Warmup)
    benchmark: Benchmark = Field(default_factory=Benchmark)
    verdict: Thresholds = Field(default_factory=Thresholds)
    preflight: Preflight = Field(default_factory=Preflight)
    run_id: RunIdText | None = None
    AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: Annotated[str, Field(max_length=2048)] | None = Field(
        default=None, description="The execution that started this run (a comparison sets it for each child run): "
        "Step Functions then links the two executions in its console; the findings record it as started_by.")
    comparison: ComparisonLink | None = Field(
        default=None, description="Set by a comparison in the input of each child run it starts, never by hand: "
        "the run restores the instance for that comparison (tagged with its id and TTL) only when the "
        "comparison's record, written before the restore, names this run, its instance and its execution.")

    @field_validator("comparison")
    @classmethod
    def _child_of_comparison(cls, v: ComparisonLink | None, info: ValidationInfo) -> ComparisonLink | None:
        if v is not None and info.data.get("restore") is None:  # the rest is checked against its record
            raise ValueError("set only by a comparison for the child runs it starts, which restore; remove it")
        return v

    _run_id = _matching("run_id", pattern=RUN_ID,
                        message="must be 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit")

    @model_validator(mode="after")
    def _storage_of_the_engine(self) -> RunInput:
        """The restore's storage by the limits of the engine named (gp3 is provisioned from 200 GiB on
        Oracle, 400 GiB on the others)."""
        r = self.restore
        if r is not None and self.target.engine:
            problem = storage_problem(r.storage_type, r.allocated_gb, r.iops, r.storage_throughput,
                                      self.target.engine)
            if problem:
                raise _field_error(f"restore.{problem[0]}", problem[1])
        return self

    @model_validator(mode="after")
    def _hot_set_of_the_engine(self) -> RunInput:
        """A hot set names segments as its engine's discovery does: one taken on another engine matches nothing."""
        hot = self.warmup.hot_set
        if hot is not None and self.target.engine and (problem := hot_set_engine_problem(hot.engine,
                                                                                          self.target.engine)):
            raise _field_error("warmup.hot_set.engine", problem)  # else Discover checks (check_hot_set_engine)
        return self

    @model_validator(mode="after")
    def _one_database_selection(self) -> RunInput:
        """target.databases and warmup.databases both choose the databases: one of them (issue 33 §1)."""
        databases = self.target.databases
        if databases is not None and self.warmup.databases:
            raise _field_error("target.databases", "and warmup.databases both choose the databases: give one "
                               "(target.databases takes names or \"all\", warmup.databases globs)")
        if isinstance(databases, list) and self.target.engine and not family(self.target.engine).database_is_identifier:
            raise _field_error("target.databases", f"{family(self.target.engine).label} reads the one database its "
                               "service names: choose its schemas with warmup.include_schemas")
        return self

    @model_validator(mode="after")
    def _names_of_the_engine(self) -> RunInput:
        """target.database and the warmup globs by the identifier limit of the engine named (issue 32 §8.4)."""
        engine = self.target.engine
        if not engine:
            return self  # the largest limit of any engine: Warmup checked it
        problems = []
        if self.target.database and family(engine).database_is_identifier:
            problem = name_problem(self.target.database, engine, glob=False, dotted=False)
            problems += [("target.database", problem)] if problem else []
        if isinstance(self.target.databases, list):
            problems += _names_problems("target.databases", self.target.databases, engine, glob=False, dotted=False)
        for name, dotted in WARMUP_GLOBS:
            problems += _names_problems(f"warmup.{name}", getattr(self.warmup, name), engine, glob=True,
                                        dotted=dotted)
        for field, problem in problems[:1]:
            raise _field_error(field, problem)
        return self

    _started_by = _matching("AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID", pattern=EXECUTION_ARN,
                            message="must be a Step Functions execution ARN (arn:aws:states:REGION:ACCOUNT:"
                            "execution:STATE_MACHINE:NAME)")


def _printable(part: Any, limit: int = 48) -> str:
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in str(part)[:limit + 1])
    return text if len(str(part)) <= limit else text[:limit] + "…"


def _location(loc: tuple[Any, ...]) -> str:
    """``warmup.priority.3``; a field name from the input is cut short and its control characters escaped."""
    text = ".".join(_printable(p) for p in loc) or "input"
    return text if len(text) <= 120 else text[:119] + "…"


_MESSAGES = {
    "bool_type": "must be true or false (a JSON boolean, not a string or a number)",
    "int_type": "must be a whole number (a JSON number, not a string or a boolean)",
    "float_type": "must be a number (a JSON number, not a string or a boolean)",
    "string_type": "must be a string",
    "list_type": "must be a list (a JSON array)",
    "dict_type": "must be an object (a JSON object)",
    "model_type": "must be an object (a JSON object)",
    "extra_forbidden": "unknown field (check the spelling; see schema/run-input.schema.json)",
    "finite_number": "must be a finite number (not Infinity, NaN, or beyond about 1.8e308)",
    "missing": "is required",
}


def error_lines(exc: ValidationError) -> list[str]:
    """One line per bad field, at most MAX_PROBLEMS of them (then how many more)."""
    errors = exc.errors(include_input=False, include_url=False)
    lines = [f"{_location(_loc(err))}: {_MESSAGES.get(err['type'], err['msg'].removeprefix('Value error, '))}"
             for err in errors[:MAX_PROBLEMS]]
    if len(errors) > MAX_PROBLEMS:
        lines.append(f"input: {len(errors) - MAX_PROBLEMS} more problems (fix the ones above first)")
    return lines


def _loc(err: Any) -> tuple[Any, ...]:
    """Where an error is; a model validator's ``_field_error`` names its field."""
    if err["type"] == "field_problem":
        return (*err["loc"], *str(err["ctx"]["field"]).split("."))
    return tuple(p for p in err["loc"] if p not in DATABASE_CHOICE_TAGS)


def describe_errors(exc: ValidationError) -> str:
    """One line naming every bad field: 'target.secret_arn: must be ...; warmup.x: unknown field'."""
    return "; ".join(error_lines(exc))


def check_depth(raw: Any, limit: int = MAX_DEPTH) -> None:
    """No recursion on the way: a 200,000-level input is one line, not a RecursionError."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(raw, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > limit:
            raise InvalidInput(f"{_location(path[:8] + ('…',))}: nested more than {limit} levels deep "
                               "(the run input is a few levels deep; see schema/run-input.schema.json)")
        if isinstance(node, dict):
            stack.extend((v, (*path, k)) for k, v in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((v, (*path, i)) for i, v in enumerate(node))


def check_host(host: str | None, allowed_hosts: Collection[str] | None) -> None:
    """``target.host`` must be one of the hosts fixed at deploy time; None: not checked (offline, local)."""
    if allowed_hosts is None or host is None:
        return
    if host.lower() not in {h.strip().lower() for h in allowed_hosts}:
        raise InvalidInput(f"target.host: {host} is not in this deployment's allow-list of database hosts "
                           "(deploy context allowed_db_hosts); remove target.host to connect to the endpoint "
                           "RDS reports for the instance")


def parse_run_input(raw: Any, *, execution_name: str | None = None,
                    allowed_hosts: Collection[str] | None = None,
                    deployment: AwsPlace | None = None) -> dict[str, Any]:
    """Validate ``raw`` and return the normalised run configuration the workflow carries.

    ``allowed_hosts``: the database hosts this deployment may connect to besides the RDS endpoint
    (deploy context ``allowed_db_hosts``); None means not checked (offline validation, the local run).
    ``deployment``: where this deployment runs (ValidateInput: from its own function ARN); the
    execution named by AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID must be there. None: not checked.
    """
    if not isinstance(raw, dict):
        raise InvalidInput("input: must be a JSON object with at least target.db_instance_identifier "
                           "and target.secret_arn")
    check_depth(raw)
    try:
        run = RunInput.model_validate(raw, strict=True)  # strict reaches verdict (verdict.Thresholds) too
    except ValidationError as exc:
        lines = error_lines(exc)
        raise InvalidInput("; ".join(lines), lines) from None
    except RecursionError:
        raise InvalidInput("input: nested too deeply") from None
    check_host(run.target.host, allowed_hosts)
    check_started_by(run.AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID, deployment)
    run_id = run.run_id or execution_name
    if not run_id or not RUN_ID.match(run_id):
        run_id = f"{run.target.db_instance_identifier}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    # target.databases only when given: every state's payload stays as it was (its 256 KiB limit)
    config = run.model_dump(mode="json", exclude={"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID": True, **(
        {"target": {"databases"}} if run.target.databases is None else {})})
    config["run_id"] = run_id
    config["started_by"] = run.AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID
    config["started_at"] = datetime.now(UTC).isoformat()
    return config


def check_baseline(config: dict[str, Any], get_run: Any) -> None:
    """A named baseline must be a finished run of this deployment: known at the start, not hours later."""
    baseline = (config.get("verdict") or {}).get("baseline_run_id")
    if not baseline:
        return
    if baseline == config["run_id"]:
        raise InvalidInput("verdict.baseline_run_id: is this run's own id; name an earlier run")
    run = get_run(baseline)
    if run is None:
        raise InvalidInput(f"verdict.baseline_run_id: no run {baseline!r} in this deployment "
                           "(check the id with `cutover-prep status`, or drop the field)")
    if run.get("step") != "finished":
        raise InvalidInput(f"verdict.baseline_run_id: run {baseline!r} has no findings to compare with "
                           f"(it is {str(run.get('status') or 'unknown').lower()}); name a finished run")
