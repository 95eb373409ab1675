"""What a configuration costs per hour: the AWS Price List API, cached in the table, else the
shipped, dated price file (``prices.json``), labelled as such. A price that neither knows is
unknown, and said so: never guessed.

``prices.json`` holds AWS's own prices, read from dated snapshots of the price feed behind the RDS
pricing pages (its ``sources``; ``dated``: the newest snapshot's date). Each price map sits beside
the ``source`` it was read from: ``instances.<databaseEngine>.usd_per_hour.<class>``,
``storage_per_gb_month.usd.<type>``, ``iops_per_month.usd.<type>``,
``throughput_per_mibps_month.usd.gp3``; ``unpriced.<engine family>`` says why a class (or ``*``: every
class) of a family has no price (docs/compare.md, "Prices").

Per hour = the instance's On-Demand hourly price + the storage's GB-month price x allocated GiB
/ 730 + the provisioned IOPS' IOPS-month price x IOPS / 730 (io1/io2: every IOPS; gp3: the IOPS
above what gp3 includes) (+ gp3 throughput above what it includes, per MiB/s-month).

The Price List API (``pricing:GetProducts``; endpoint in us-east-1) answers ``PriceList``: a list
of JSON *strings*, each ``{"product": {"productFamily", "attributes": {...}}, "terms": {"OnDemand":
{"<sku>.<offer>": {"priceDimensions": {"<sku>.<offer>.<rate>": {"unit": "Hrs", "pricePerUnit":
{"USD": "0.0720000000"}}}}}}}``.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, NotRequired, TypedDict

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, Field, ValidationError

from cutover_prep.engines.registry import DEFAULT_ENGINE, family

log = logging.getLogger(__name__)

PRICE_FILE = Path(__file__).with_name("prices.json")
HOURS_PER_MONTH = 730  # AWS's monthly hours in its price examples
PRICING_REGION = "us-east-1"  # the Price List API's endpoint (it also answers from ap-south-1, eu-central-1)
CACHE_DAYS = 7
LOCATIONS = {  # the Price List's "location" attribute of the regions a deployment is likely in
    "us-east-1": "US East (N. Virginia)", "us-east-2": "US East (Ohio)", "us-west-1": "US West (N. California)",
    "us-west-2": "US West (Oregon)", "ca-central-1": "Canada (Central)", "eu-west-1": "EU (Ireland)",
    "eu-west-2": "EU (London)", "eu-west-3": "EU (Paris)", "eu-central-1": "EU (Frankfurt)",
    "eu-north-1": "EU (Stockholm)", "ap-south-1": "Asia Pacific (Mumbai)", "ap-northeast-1": "Asia Pacific (Tokyo)",
    "ap-northeast-2": "Asia Pacific (Seoul)", "ap-southeast-1": "Asia Pacific (Singapore)",
    "ap-southeast-2": "Asia Pacific (Sydney)", "sa-east-1": "South America (Sao Paulo)",
}
VOLUME_TYPES = {"gp2": "General Purpose", "gp3": "General Purpose-GP3", "io1": "Provisioned IOPS",
                "io2": "Provisioned IOPS-IO2"}
GP3_INCLUDED = {False: (3000, 125), True: (12000, 500)}  # (IOPS, MiB/s) gp3 includes, below / above striping


def _database_engine(engine: str) -> str:
    """The Price List's databaseEngine of the family; "Any" (storage and IOPS priced for every engine)
    when the family names none."""
    names = family(engine).limits.price_list
    return names[0] if names else "Any"


@cache
def price_file() -> dict[str, Any]:
    return json.loads(PRICE_FILE.read_text())


class ListedPrices(BaseModel):
    """A price map of the shipped file (USD per unit, by storage type) beside its source."""

    source: str | None = None
    usd: dict[str, float | None] = {}


class InstancePrices(BaseModel):
    """An engine's instance prices in the shipped file (USD per hour, by instance class) beside their source."""

    source: str | None = None
    usd_per_hour: dict[str, float | None] = {}


class PriceFile(BaseModel):
    """The shipped, dated price file (``prices.json``: the fields the book reads)."""

    dated: str
    region: str
    instances: dict[str, InstancePrices] = {}
    storage_per_gb_month: ListedPrices = ListedPrices()
    iops_per_month: ListedPrices = ListedPrices()
    throughput_per_mibps_month: ListedPrices = ListedPrices()


@cache
def shipped_prices() -> PriceFile:
    return PriceFile.model_validate(price_file())


class CachedPrice(NamedTuple):
    usd: float
    fetched: str  # the day the Price List API answered it


class _PricePerUnit(BaseModel):
    usd: str | float | None = Field(None, alias="USD")


class _PriceDimension(BaseModel):
    unit: str | None = None
    price_per_unit: _PricePerUnit = Field(_PricePerUnit(), alias="pricePerUnit")


class _Term(BaseModel):
    price_dimensions: dict[str, _PriceDimension] | None = Field(None, alias="priceDimensions")


class _Terms(BaseModel):
    on_demand: dict[str, _Term] | None = Field(None, alias="OnDemand")


class _Product(BaseModel):
    attributes: dict[str, str] = {}


class PriceListProduct(BaseModel):
    """A product of the Price List API's ``PriceList`` (the fields the book reads)."""

    product: _Product = _Product()
    terms: _Terms = _Terms()


def file_label() -> str:
    return f"shipped price file (dated {shipped_prices().dated})"


@dataclass
class Component:
    name: str  # instance, storage, iops, throughput
    quantity: float  # 1 instance, GiB, IOPS, MiB/s
    unit: str  # Hrs, GB-Mo, IOPS-Mo, MiBps-Mo
    usd_per_unit: float | None = None
    source: str | None = None
    why_unknown: str | None = None

    @property
    def per_hour(self) -> float | None:
        if self.usd_per_unit is None:
            return None
        per = self.usd_per_unit if self.unit == "Hrs" else self.usd_per_unit / HOURS_PER_MONTH
        return per * self.quantity


class ComponentDetail(TypedDict):
    """A priced component as the comparison writes it (``price_detail``)."""

    quantity: float
    unit: str
    usd_per_unit: float | None
    usd_per_hour: float | None
    source: str | None
    unknown: NotRequired[str]


@dataclass
class Price:
    per_hour_usd: float | None
    components: list[Component] = field(default_factory=list)

    @property
    def sources(self) -> list[str]:
        return sorted({c.source for c in self.components if c.source})

    @property
    def source(self) -> str:
        unknown = [f"{c.name}: {c.why_unknown}" for c in self.components if c.usd_per_unit is None]
        known = "; ".join(self.sources)
        return known + (f"; unknown: {'; '.join(unknown)}" if unknown else "")

    def detail(self) -> dict[str, ComponentDetail]:
        """Each component by its name."""
        out = {}
        for c in self.components:
            out[c.name] = ComponentDetail(quantity=c.quantity, unit=c.unit, usd_per_unit=c.usd_per_unit,
                                          usd_per_hour=None if c.per_hour is None else round(c.per_hour, 6),
                                          source=c.source)
            if c.why_unknown:
                out[c.name]["unknown"] = c.why_unknown
        return out


class PriceBook:
    """Prices of configurations. ``client``: a boto3 ``pricing`` client (None: the shipped file only,
    e.g. the local run); ``store``: the table that caches what the API answered."""

    def __init__(self, *, client: Any = None, store: Any = None, region: str = PRICING_REGION,
                 clock: Any = time.time) -> None:
        self.client, self.store, self.region, self.clock = client, store, region, clock
        self.api_failed: str | None = None  # set at the first failure: the rest is not asked again

    # -- the whole configuration ---------------------------------------------------------------
    def configuration(self, configuration: Any, engine: str | None) -> Price:
        engine = family(engine or DEFAULT_ENGINE).name
        kind, gb = configuration.storage_type, configuration.allocated_gb
        striped = gb >= family(engine).limits.stripe_threshold_gb
        parts = [self.instance(configuration.db_instance_class, engine), self.storage(kind, gb, engine)]
        if kind in ("io1", "io2"):
            parts.append(self.iops(kind, float(configuration.iops or 0), engine))
        elif kind == "gp3":
            included_iops, included_mib = GP3_INCLUDED[striped]
            if configuration.iops and configuration.iops > included_iops:
                parts.append(self.iops(kind, float(configuration.iops - included_iops), engine))
            if configuration.storage_throughput and configuration.storage_throughput > included_mib:
                parts.append(self.throughput(float(configuration.storage_throughput - included_mib), engine))
        known = [p.per_hour for p in parts]
        total = None if any(v is None for v in known) else round(sum(v or 0.0 for v in known), 6)
        return Price(per_hour_usd=total, components=parts)

    # -- components ------------------------------------------------------------------------------
    def instance(self, instance_class: str, engine: str) -> Component:
        part = Component("instance", 1, "Hrs")
        names = family(engine).limits.price_list  # (databaseEngine, databaseEdition, licenseModel)
        if names is None:
            part.why_unknown = (f"{engine}: its edition and licence model are not in the input, so its Price List "
                                "entry cannot be chosen")
            return part
        database_engine, edition, licence = names
        filters = {"productFamily": "Database Instance", "instanceType": instance_class,
                   "databaseEngine": database_engine, "licenseModel": licence, "deploymentOption": "Single-AZ"}
        if edition:
            filters["databaseEdition"] = edition
        return self._fill(part, f"instance/{database_engine}/{instance_class}", filters,
                          lambda f: f.instances.get(database_engine, InstancePrices()).usd_per_hour.get(instance_class))

    def storage(self, kind: str, gb: float, engine: str) -> Component:
        part = Component("storage", gb, "GB-Mo")
        database_engine = _database_engine(engine)
        filters = {"productFamily": "Database Storage", "volumeType": VOLUME_TYPES[kind],
                   "databaseEngine": database_engine, "deploymentOption": "Single-AZ"}
        return self._fill(part, f"storage/{database_engine}/{kind}", filters,
                          lambda f: f.storage_per_gb_month.usd.get(kind))

    def iops(self, kind: str, iops: float, engine: str) -> Component:
        part = Component("iops", iops, "IOPS-Mo")
        database_engine = _database_engine(engine)
        filters = {"productFamily": "Provisioned IOPS", "databaseEngine": database_engine,
                   "deploymentOption": "Single-AZ"}
        return self._fill(part, f"iops/{database_engine}/{kind}", filters,
                          lambda f: f.iops_per_month.usd.get(kind), pick=_iops_product(kind))

    def throughput(self, mib_s: float, engine: str) -> Component:
        part = Component("throughput", mib_s, "MiBps-Mo")
        database_engine = _database_engine(engine)
        filters = {"productFamily": "Provisioned Throughput", "databaseEngine": database_engine,
                   "deploymentOption": "Single-AZ"}
        return self._fill(part, f"throughput/{database_engine}/gp3", filters,
                          lambda f: f.throughput_per_mibps_month.usd.get("gp3"))

    # -- where a price comes from ------------------------------------------------------------------
    def _fill(self, part: Component, key: str, filters: dict[str, str], from_file: Any,
              pick: Any = None) -> Component:
        location = LOCATIONS.get(self.region)
        if self.client is not None and location:
            cached = self._cached(f"{self.region}/{key}")
            if cached is not None:
                part.usd_per_unit, part.source = cached.usd, f"AWS Price List API (cached {cached.fetched})"
                return part
            found = self._ask(dict(filters, location=location), part.unit, pick)
            if found is None and filters["databaseEngine"] != "Any" and part.name != "instance":
                # storage and IOPS are listed for the engine, or for every engine as "Any"
                found = self._ask(dict(filters, databaseEngine="Any", location=location), part.unit, pick)
            if found is not None:
                part.usd_per_unit, part.source = found, f"AWS Price List API ({location}, {_today()})"
                self._cache(f"{self.region}/{key}", found)
                return part
        if self.region != shipped_prices().region:
            part.why_unknown = (f"no Price List answer and the shipped price file holds {shipped_prices().region} "
                                f"prices only (the instances run in {self.region})")
            return part
        value = from_file(shipped_prices())
        if value is None:
            part.why_unknown = (f"not in the {file_label()}"
                                + (f" and the Price List API could not be asked ({self.api_failed})"
                                   if self.api_failed else ""))
            return part
        part.usd_per_unit, part.source = float(value), file_label()
        return part

    def _ask(self, filters: dict[str, str], unit: str, pick: Any) -> float | None:
        if self.api_failed:
            return None
        try:
            pages = self.client.get_paginator("get_products").paginate(
                ServiceCode="AmazonRDS", FormatVersion="aws_v1",
                Filters=[{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()])
            products = [PriceListProduct.model_validate(json.loads(p) if isinstance(p, str) else p)
                        for page in pages for p in page["PriceList"]]
        except (ClientError, BotoCoreError) as exc:
            code = exc.response["Error"]["Code"] if isinstance(exc, ClientError) else type(exc).__name__
            self.api_failed = code
            log.warning("Price List API not reachable (%s): the shipped price file is used", code)
            return None
        if pick is not None:
            products = [p for p in products if pick(p)]
        prices = sorted({v for p in products for v in on_demand_prices(p, unit)})
        if len(prices) > 1:
            log.info("several prices match %s: %s; the lowest is used", filters, prices)
        return prices[0] if prices else None

    def _cached(self, key: str) -> CachedPrice | None:
        if self.store is None:
            return None
        try:
            item = self.store.deployment.price(key)
        except (ClientError, BotoCoreError, ValidationError):
            return None
        if item is None or float(item.expires_at) < self.clock():
            return None  # DynamoDB deletes expired items within days, not at once
        return CachedPrice(float(item.usd), item.fetched)

    def _cache(self, key: str, usd: float) -> None:
        if self.store is None:
            return
        try:
            self.store.deployment.put_price(key, usd=usd, fetched=_today(),
                                            expires_at=int(self.clock() + CACHE_DAYS * 86400))
        except (ClientError, BotoCoreError) as exc:  # a price not cached is asked again next time
            log.warning("price not cached: %s", exc)


def on_demand_prices(product: PriceListProduct, unit: str) -> list[float]:
    """The positive On-Demand USD prices of ``product`` per ``unit`` (e.g. ``Hrs``, ``GB-Mo``)."""
    out = []
    for term in (product.terms.on_demand or {}).values():
        for dimension in (term.price_dimensions or {}).values():
            if dimension.unit != unit:
                continue
            try:
                usd = float(dimension.price_per_unit.usd)
            except (TypeError, ValueError):
                continue
            if usd > 0:
                out.append(usd)
    return out


def _iops_product(kind: str) -> Any:
    """io1's, io2's or gp3's provisioned IOPS among the family's products (by their usage type)."""
    def pick(product: PriceListProduct) -> bool:
        attrs = product.product.attributes
        text = " ".join(attrs.get(k, "") for k in ("usagetype", "volumeType", "group", "groupDescription"))
        text = text.upper()
        if kind == "io2":
            return "IO2" in text
        if kind == "gp3":
            return "GP3" in text
        return "IO2" not in text and "GP3" not in text
    return pick


def _today() -> str:
    return datetime.now(UTC).date().isoformat()
