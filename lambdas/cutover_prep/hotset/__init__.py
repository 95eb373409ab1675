"""The hot set: the relations the application touches first, ranked by the source database's own statistics.

``cutover-prep hotset`` (``cli/hotset.py``) asks the engine's hook (``EngineFamily.hotset``, in
``engines/<engine>/hotset.py``) for every user relation with its access figures, read-only; this module
ranks them (``take``), keeps the top N or the share of all accesses asked for, and writes the profile
file (``Profile``). A run names the profile's relations in ``warmup.hot_set`` (``Profile.to_input``;
``cutover-prep local --hotset FILE`` / ``start --hotset FILE``), and the planner reads them right after
the ``warmup.priority`` patterns (``warmup.planning``).

The sources, in the order the run reads them: 1. ``warmup.priority`` (the input's patterns); 2. the
profile's statistics (``SOURCE_STATISTICS``: e.g. pg_statio_user_tables); 3. on Oracle only, AWR history
(``SOURCE_AWR``: DBA_HIST_SEG_STAT), only when asked with the statement that the Diagnostics Pack is
licensed. Within the profile, the statistics' relations come first, then those only AWR names.

A relation is what the engine's statistics count as one (a table with its indexes and TOAST on PostgreSQL
and MySQL/MariaDB, a segment's object on Oracle); ``segments`` are the exact names the planner matches
(``[database/]schema.name`` of each segment it discovers), made by the engine's hook so nothing here knows
an engine's naming.

What the hook is given and answers (``HotsetOptions``, ``Taken``: ``RelationStats`` by ``Source``) is on the
engines' floor (``engines/hotset.py``); whether a profile taken on one engine fits another is the registry's
(``engines.registry.same_engine_code``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cutover_prep.engines.hotset import (
    SOURCE_AWR,
    SOURCE_STATISTICS,
    HotsetOptions,
    HotsetProblem,
    NoStatistics,
    RelationStats,
    Taken,
)
from cutover_prep.engines.registry import family
from cutover_prep.models.run_input import error_lines
from cutover_prep.models.warmup import HotSet, HotSetName

FORMAT = "cutover-prep-hotset/1"
SOURCE_ORDER = (SOURCE_STATISTICS, SOURCE_AWR)
MAX_RELATIONS = 500  # a profile's relations
MAX_NAME_CHARS = 256
DEFAULT_TOP = 20


# ---- the profile file ----------------------------------------------------------------------------------------

Text = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SourceModel(_Model):
    source: Literal["statistics", "awr"]
    views: Annotated[list[Text], Field(min_length=1, max_length=8)]
    figure: Text
    since: Text | None = None


class Relation(_Model):
    rank: Annotated[int, Field(ge=1)]
    source: Literal["statistics", "awr"]
    database: Text | None = None
    schema_: Text = Field(alias="schema")
    name: Text
    kind: Annotated[str, Field(min_length=1, max_length=64)]
    accesses: Annotated[int, Field(ge=0)]
    share_pct: Annotated[float, Field(ge=0, le=100)]
    figures: dict[Annotated[str, Field(max_length=64)], int] = Field(max_length=16)
    bytes: Annotated[int, Field(ge=0)] | None
    segments: Annotated[list[HotSetName], Field(min_length=1, max_length=64)]  # the run input's own type

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class Selection(_Model):
    databases: list[Text] = Field(default_factory=list, max_length=100)
    top: Annotated[int, Field(ge=1, le=MAX_RELATIONS)] | None = None
    share_pct: Annotated[float, Field(gt=0, le=100)] | None = None
    relations_seen: Annotated[int, Field(ge=0)]
    accesses_total: Annotated[int, Field(ge=0)]


class Profile(_Model):
    """A hot-set profile file (``FORMAT``)."""

    format: Literal["cutover-prep-hotset/1"]
    engine: Annotated[str, Field(min_length=1, max_length=32)]
    server: Text
    taken_at: Text
    sources: Annotated[list[SourceModel], Field(min_length=1, max_length=2)]
    selection: Selection
    relations: Annotated[list[Relation], Field(max_length=MAX_RELATIONS)]

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        named = {s.source for s in self.sources}
        for r in self.relations:
            if r.source not in named:
                raise ValueError(f"relation {r.schema_}.{r.name} comes from source {r.source!r}, which the "
                                 "profile's sources do not name")
        ranks = [r.rank for r in self.relations]
        if ranks != list(range(1, len(ranks) + 1)):
            raise ValueError("relations must be ranked 1, 2, 3 ... in order")
        return self

    def names(self) -> list[str]:
        """The segments' names in rank order, each once: what ``warmup.hot_set.names`` holds."""
        return list(dict.fromkeys(n for r in self.relations for n in r.segments))

    def to_input(self) -> dict[str, Any]:
        """``warmup.hot_set`` of a run input, checked by the run input's own model (``models.run_input.HotSet``):
        what a run would refuse raises ``HotsetProblem`` here (one line), so `cutover-prep hotset`, which calls
        this before it writes, never writes a profile a run refuses (issue 32 §8)."""
        names = self.names()
        data = {"engine": self.engine, "server": self.server, "taken_at": self.taken_at,
                "sources": [f"{s.source}: {', '.join(s.views)}" for s in self.sources],
                "relations": len(self.relations), "names": names}
        try:
            return HotSet.model_validate(data, strict=True).model_dump(mode="json")
        except ValidationError as exc:
            problems = "; ".join(f"warmup.hot_set.{line}" for line in error_lines(exc))
            raise HotsetProblem(f"the hot set ({len(names)} segments, {sum(len(n) for n in names)} characters) "
                                f"does not fit a run input: {problems}"
                                + ("; take it again with a smaller --top or --share"
                                   if any(line.startswith("names:") for line in error_lines(exc)) else "")) from None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


def _problem(exc: ValidationError) -> str:
    err = exc.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(p) for p in err["loc"]) or "profile"
    more = len(exc.errors()) - 1
    return f"{where}: {err['msg'].removeprefix('Value error, ')}" + (f" (and {more} more problems)" if more else "")


def parse(data: Any, *, origin: str = "hot-set profile") -> Profile:
    """A profile from its JSON; ``HotsetProblem`` (one line naming the field) when it is not one."""
    if not isinstance(data, dict):
        raise HotsetProblem(f"{origin}: must be a JSON object (written by `cutover-prep hotset --out FILE`)")
    if data.get("format") != FORMAT:
        raise HotsetProblem(f"{origin}: format must be {FORMAT!r} (written by `cutover-prep hotset --out FILE`), "
                            f"found {str(data.get('format'))[:60]!r}")
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise HotsetProblem(f"{origin}: {_problem(exc)}") from None


def load(path: str | Path) -> Profile:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise HotsetProblem(f"hot-set profile {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise HotsetProblem(f"hot-set profile {path}: not JSON ({str(exc).splitlines()[0][:120]})") from None
    return parse(data, origin=f"hot-set profile {path}")


# ---- ranking -------------------------------------------------------------------------------------------------

def _select(rows: list[RelationStats], top: int | None, share_pct: float | None) -> list[RelationStats]:
    """The hottest first; the first ``top``, or the fewest that make ``share_pct`` of the source's accesses."""
    rows = sorted((r for r in rows if r.accesses > 0),
                  key=lambda r: (-r.accesses, r.database or "", r.schema, r.name))
    if share_pct is not None:
        total, out, running = sum(r.accesses for r in rows), [], 0
        for r in rows:
            if total and running >= total * share_pct / 100:
                break
            out.append(r)
            running += r.accesses
        rows = out
    return rows[:top] if top is not None else rows


def rank(taken: Taken, *, databases: Sequence[str] = (), top: int | None = DEFAULT_TOP,
         share_pct: float | None = None, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Profile:
    """The profile of what a hook took: per source in ``SOURCE_ORDER`` the hottest relations (``top`` of each,
    or the share of its accesses); a relation AWR names that the statistics already hold is left out there."""
    chosen: list[tuple[RelationStats, float]] = []
    seen: set[tuple[str | None, str, str]] = set()
    total_all = 0
    for source in SOURCE_ORDER:
        rows = [r for r in taken.relations if r.source == source]
        total = sum(r.accesses for r in rows if r.accesses > 0)
        total_all += total
        for r in _select(rows, top, share_pct):
            key = (r.database, r.schema, r.name)
            if key not in seen:
                seen.add(key)
                chosen.append((r, round(100.0 * r.accesses / total, 3) if total else 0.0))
    chosen = chosen[:MAX_RELATIONS]
    data = {
        "format": FORMAT, "engine": taken.engine, "server": taken.server,
        "taken_at": now().isoformat(timespec="seconds"),
        "sources": [{k: v for k, v in vars(s).items() if v is not None} for s in taken.sources],
        "selection": {"databases": list(databases), "top": top, "share_pct": share_pct,
                      "relations_seen": len(taken.relations), "accesses_total": total_all},
        "relations": [{"rank": i, "source": r.source, "database": r.database, "schema": r.schema, "name": r.name,
                       "kind": r.kind, "accesses": r.accesses, "share_pct": share, "figures": r.figures,
                       "bytes": r.bytes, "segments": list(dict.fromkeys(r.segments))[:64]}
                      for i, (r, share) in enumerate(chosen, 1)],
    }
    try:
        return parse(data, origin="hot-set profile (as taken)")
    except HotsetProblem as exc:  # e.g. a name with a control character, which no run input holds
        raise HotsetProblem(f"{exc}; a run input cannot hold this relation: take the profile with --database "
                            "leaving its database out (the warm-up still reads it, after the hot set)") from None


def take(spec: Any, options: HotsetOptions, *, top: int | None = DEFAULT_TOP, share_pct: float | None = None,
         hook: Callable[[Any, HotsetOptions], Taken] | None = None) -> Profile:
    """Take the hot-set profile of the database ``spec`` names with its engine's hook (read-only)."""
    fam = family(spec.engine)
    hook = hook or fam.hotset
    if hook is None:
        raise HotsetProblem(f"the hot set is not offered for {fam.label}")
    taken = hook(spec, options)
    taken.engine = family(taken.engine or spec.engine).name
    if not taken.relations:
        raise NoStatistics(f"{taken.server}: the statistics count no access to any selected user relation "
                            f"({'; '.join(', '.join(s.views) for s in taken.sources)}); take the profile on the "
                            "source database after it has served its workload")
    return rank(taken, databases=options.databases, top=top, share_pct=share_pct)


def lines(profile: Profile) -> list[str]:
    """The profile for a terminal."""
    out = [f"hot set of {profile.server}, taken {profile.taken_at}"]
    for i, s in enumerate(profile.sources, 2):  # source 1 is the run input's warmup.priority
        since = f", since {s.since}" if s.since else ""
        out.append(f"  source {i}: {s.source} ({', '.join(s.views)}; ranked by {s.figure}{since})")
    sel = profile.selection
    how = (f"the fewest making {sel.share_pct:g} % of the accesses" if sel.share_pct is not None else "")
    how = " and ".join(x for x in (how, f"at most {sel.top} per source" if sel.top else "") if x)
    out.append(f"  {len(profile.relations)} of {sel.relations_seen} relations with accesses ({how})")
    total_bytes = sum(r.bytes or 0 for r in profile.relations)
    out.append(f"  {total_bytes / 2**20:.1f} MiB in {len(profile.names())} segments")
    for r in profile.relations:
        size = f"{r.bytes / 2**20:.1f} MiB" if r.bytes is not None else "size unknown"
        # its first segment's name is the relation's own, as the engine writes it (each name quoted where
        # needed, engines.keys): "b"."c.t" and "b.c"."t" are two lines apart, not twice b.c.t (issue 32)
        out.append(f"  {r.rank:>3}. {r.segments[0]} ({r.kind}, {r.source}): {r.accesses} accesses "
                   f"({r.share_pct:g} %), {size}")
    return out


def with_hot_set(run_input: dict[str, Any] | None, profile: Profile) -> dict[str, Any]:
    """``run_input`` (a copy) whose ``warmup.hot_set`` names the profile's relations."""
    out = dict(run_input or {})
    warmup = out.get("warmup")
    out["warmup"] = {**(warmup if isinstance(warmup, dict) else {}), "hot_set": profile.to_input()}
    return out
