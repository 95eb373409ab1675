"""What a segment's locator says: where the engine finds it again, typed per engine (issue 34).

Each engine writes its own locator at discovery (``PgLocator``: the relation fork; ``MysqlLocator``: the read
method and the names and sizes its statements take; ``OracleLocator``: the read method, the segment's names and
data object id, or a datafile). ``Locator`` is their discriminated union, parsed once where a locator enters
(discovery builds it; a plan's range, a benchmark target or a page of segments read back as JSON goes through
``parse_locator``). The JSON stays what the engine wrote: the fields it set, in its order, and nothing else
(``Locator.to_json``); a field a locator does not hold is its default. The stored JSON carries no engine tag:
the read method tells MySQL's (``MYSQL_READS``) from Oracle's (``ORACLE_READS``, or an ``owner``); a locator
with neither is PostgreSQL's, which has no read method.
"""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    PrivateAttr,
    Tag,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    model_validator,
)

MYSQL_READS = frozenset({"pk_walk", "full_scan", "index_scan", "not_readable"})
ORACLE_READS = frozenset({"rowid_range", "index", "iot_overflow", "lob", "datafile", "unsupported"})


class KeysInOrder(BaseModel):
    """A model read from JSON that remembers the order of the keys it was given (``_order``), so that it can be
    written back in the engine's order (``BaseLocator``, ``dal.records.plan.RangeLocator``)."""

    _order: tuple[str, ...] = PrivateAttr(default=())  # the fields in the order the engine wrote them

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: object, handler: ValidatorFunctionWrapHandler) -> Self:
        model = handler(data)
        if isinstance(data, dict):
            model._order = tuple(data)
        return model


class BaseLocator(KeysInOrder):
    """What every engine's locator may hold and the warm-up reads of any of them: ``cache`` (a hot-set range,
    loaded into the engine's buffer cache: ``planning.cache_hot_set``), ``whole_pieces`` (a chunk may not stop
    inside one of its pieces), ``chunk_bytes`` (the least a call should read: an engine whose every call costs a
    fixed price), ``database`` (PostgreSQL: the database whose session reads it). Fields not named here that a
    locator held are kept as written (an older plan's)."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    cache: bool = False
    whole_pieces: bool = False
    chunk_bytes: int | None = None
    database: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        """The locator as the engine wrote it: the fields it set, in its order."""
        written = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return {**{k: written[k] for k in self._order if k in written}, **written}

    def with_fields(self, **changes: JsonValue) -> Self:
        """This locator with ``changes``: a field it held keeps its place, a new one goes last (as a dict's
        ``{**locator, **changes}``)."""
        return type(self).model_validate({**self.to_json(), **changes})

    @classmethod
    def of(cls, locator: BaseLocator | dict[str, JsonValue]) -> Self:
        """``locator`` (typed, or its JSON) as this engine reads it: itself when it is this engine's; else its
        JSON read as this engine's (a field this engine does not know is kept, not read)."""
        if isinstance(locator, cls):
            return locator
        return cls.model_validate(locator.to_json() if isinstance(locator, BaseLocator) else locator)


class PgLocator(BaseLocator):
    """One relation fork: its ``database``, ``oid``, ``fork`` (``main``, ``fsm``, ``vm``, ``init``), ``relkind``
    and names; ``cache``: a hot-set range, prewarmed into shared buffers."""

    oid: int | None = None
    fork: str | None = None
    relkind: str | None = None
    schema_name: str | None = Field(None, alias="schema")  # ``schema``: a BaseModel attribute; stored ``schema``
    relname: str | None = None


class MysqlProbe(BaseModel):
    """A clustered key of one integer column: single-row lookups by ``column`` (the probes and the sweep)."""

    model_config = ConfigDict(frozen=True)

    column: str


class MysqlLocator(BaseLocator):
    """One MySQL or MariaDB segment. ``read``: ``pk_walk`` (the clustered index walked in key order, ``key_index``
    by ``key_columns``; ``probe``: its integer key column, for single-row lookups), ``full_scan`` (no key to walk:
    every column of ``columns``, ignoring ``indexes``), ``index_scan`` (a secondary ``index`` read covering by
    ``index_columns``, or as a range over ``range_column``), ``not_readable`` (``why`` says what it is)."""

    read: str = ""
    schema_name: str = Field("", alias="schema")  # stored ``schema``
    table: str = ""
    engine: str | None = None
    partition: str | None = None
    key_index: str | None = None
    key_columns: tuple[str, ...] = ()
    offpage: tuple[str, ...] = ()
    rows: int = 0
    pages: int = 0
    probe: MysqlProbe | None = None
    indexes: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    index: str | None = None
    index_columns: tuple[str, ...] = ()
    range_column: str | None = None
    why: str | None = None


class OracleLocator(BaseLocator):
    """One Oracle segment. ``read``: ``rowid_range`` (a heap table segment, by ``data_object_id``), ``index``,
    ``iot_overflow``, ``lob``, ``datafile`` (the datafile pass: ``file_id``, ``tablespace``), ``unsupported``
    (``why`` says what it is). ``file_volumes``: ``{file number: RDS additional storage volume}``
    (``engines.oracle.volumes``)."""

    read: str = ""
    owner: str | None = None
    segment: str | None = None
    partition: str | None = None
    segment_type: str | None = None
    table: str | None = None
    table_owner: str | None = None
    data_object_id: int | None = None
    subpartition: bool = False
    bigfile: bool = False
    whole_index: bool = False
    invisible: bool = False
    overflow: str | None = None
    split: str | None = None  # a slice per call: "key_range" (an IOT's overflow), "table_rowid" (a heap table's LOB)
    column: str | None = None
    data_type: str | None = None
    table_partition: str | None = None
    table_subpartition: bool = False
    table_segment_type: str | None = None
    why: str | None = None
    file_id: int | None = None
    tablespace: str | None = None
    file_volumes: dict[str, str] = {}
    file_volumes_ambiguous: bool = False


def _engine_of(data: object) -> str:
    """Which engine wrote a locator (its JSON, or a locator already typed)."""
    if isinstance(data, BaseLocator):
        data = data.to_json()
    if not isinstance(data, dict):
        return "postgres"
    read = data.get("read")
    if read in MYSQL_READS:
        return "mysql"
    if read in ORACLE_READS or "owner" in data:
        return "oracle"
    return "postgres"


Locator = Annotated[Annotated[PgLocator, Tag("postgres")] | Annotated[MysqlLocator, Tag("mysql")]
                    | Annotated[OracleLocator, Tag("oracle")], Discriminator(_engine_of)]
LOCATOR: TypeAdapter[PgLocator | MysqlLocator | OracleLocator] = TypeAdapter(Locator)


def parse_locator(data: dict[str, JsonValue] | BaseLocator) -> PgLocator | MysqlLocator | OracleLocator:
    """A locator where it enters (its JSON), typed; one already typed is returned as it is."""
    if isinstance(data, (PgLocator, MysqlLocator, OracleLocator)):
        return data
    return LOCATOR.validate_python(data)
