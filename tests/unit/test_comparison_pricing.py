"""Prices of a configuration: the Price List API's real answer shape (Stubber), the table cache,
the shipped price file when the API cannot be asked, and an unknown price said so."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import ANY, Stubber

from cutover_prep.comparison.model import Configuration
from cutover_prep.pricing.book import (
    HOURS_PER_MONTH,
    PriceBook,
    PriceListProduct,
    file_label,
    on_demand_prices,
    price_file,
)


def product(family: str, attributes: dict, unit: str, usd: str) -> str:
    """One PriceList entry as GetProducts returns it: a JSON string."""
    sku = "SKU" + str(abs(hash((family, unit, usd))) % 10**6)
    return json.dumps({
        "product": {"productFamily": family, "sku": sku, "attributes": attributes},
        "serviceCode": "AmazonRDS",
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {
            "offerTermCode": "JRTCKXETXF", "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z",
            "priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                "unit": unit, "endRange": "Inf", "beginRange": "0", "rateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                "description": f"{family} price", "appliesTo": [], "pricePerUnit": {"USD": usd}}},
            "termAttributes": {}}}},
        "version": "20261101000000", "publicationDate": "2026-11-01T00:00:00Z"})


INSTANCE = product("Database Instance", {"instanceType": "db.r6i.large", "databaseEngine": "PostgreSQL",
                                         "deploymentOption": "Single-AZ", "usagetype": "InstanceUsage:db.r6i.large"},
                   "Hrs", "0.2500000000")
STORAGE_IO1 = product("Database Storage", {"volumeType": "Provisioned IOPS", "usagetype": "RDS:PIOPS-Storage"},
                      "GB-Mo", "0.1250000000")
IOPS = [product("Provisioned IOPS", {"usagetype": "RDS:PIOPS", "group": "RDS-PIOPS"}, "IOPS-Mo", "0.1000000000"),
        product("Provisioned IOPS", {"usagetype": "RDS:PIOPS-IO2"}, "IOPS-Mo", "0.0900000000")]
IO1 = Configuration(name="r6i-io1", db_instance_class="db.r6i.large", storage_type="io1", allocated_gb=200,
                    iops=5000)


def expect(stub: Stubber, price_list: list[str], **filters: str) -> None:
    wanted = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()]
    stub.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": price_list},
                      {"ServiceCode": "AmazonRDS", "FormatVersion": "aws_v1", "Filters": wanted})


@pytest.fixture
def client():
    return boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def test_on_demand_prices_reads_the_real_shape():
    product = PriceListProduct.model_validate(json.loads(INSTANCE))
    assert on_demand_prices(product, "Hrs") == [0.25] and on_demand_prices(product, "GB-Mo") == []


def test_a_configuration_is_priced_from_the_api_and_cached_in_the_table(client, store):
    with Stubber(client) as stub:
        expect(stub, [INSTANCE], productFamily="Database Instance", instanceType="db.r6i.large",
               databaseEngine="PostgreSQL", licenseModel="No license required", deploymentOption="Single-AZ",
               location="US East (N. Virginia)")
        expect(stub, [STORAGE_IO1], productFamily="Database Storage", volumeType="Provisioned IOPS",
               databaseEngine="PostgreSQL", deploymentOption="Single-AZ", location="US East (N. Virginia)")
        expect(stub, IOPS, productFamily="Provisioned IOPS", databaseEngine="PostgreSQL",
               deploymentOption="Single-AZ", location="US East (N. Virginia)")
        price = PriceBook(client=client, store=store).configuration(IO1, "postgres")
        stub.assert_no_pending_responses()
    expected = 0.25 + 0.125 * 200 / HOURS_PER_MONTH + 0.10 * 5000 / HOURS_PER_MONTH  # io1's IOPS, not io2's
    assert price.per_hour_usd == pytest.approx(expected, abs=1e-6)
    assert all(s.startswith("AWS Price List API (US East (N. Virginia)") for s in price.sources)
    item = store._ddb.get_item(TableName=store.table, Key={"pk": {"S": "PRICE#us-east-1/instance/PostgreSQL/"
                                                                  "db.r6i.large"}, "sk": {"S": "PRICE"}})["Item"]
    assert float(item["usd"]["N"]) == 0.25 and int(item["expires_at"]["N"]) > 0
    with Stubber(client) as stub:  # no answer queued: a call to the API would fail the test
        again = PriceBook(client=client, store=store).configuration(IO1, "postgres")
    assert again.per_hour_usd == pytest.approx(expected, abs=1e-6)
    assert all(s.startswith("AWS Price List API (cached") for s in again.sources)


def test_an_expired_cache_entry_is_asked_again(client, store):
    with Stubber(client) as stub:
        expect(stub, [INSTANCE], productFamily="Database Instance", instanceType="db.r6i.large",
               databaseEngine="PostgreSQL", licenseModel="No license required", deploymentOption="Single-AZ",
               location="US East (N. Virginia)")
        PriceBook(client=client, store=store).instance("db.r6i.large", "postgres")
        expect(stub, [INSTANCE], productFamily=ANY, instanceType=ANY, databaseEngine=ANY, licenseModel=ANY,
               deploymentOption=ANY, location=ANY)
        later = PriceBook(client=client, store=store, clock=lambda: 2e10).instance("db.r6i.large", "postgres")
        stub.assert_no_pending_responses()
    assert later.source.startswith("AWS Price List API (US East")


def test_without_the_api_the_shipped_file_is_used_and_labelled(client):
    gp2 = Configuration(name="gp2", db_instance_class="db.t3.medium", storage_type="gp2", allocated_gb=100)
    with Stubber(client) as stub:
        stub.add_client_error("get_products", service_error_code="AccessDeniedException", http_status_code=400)
        book = PriceBook(client=client)
        price = book.configuration(gp2, "postgres")
    assert book.api_failed == "AccessDeniedException"
    assert price.per_hour_usd == pytest.approx(0.072 + 0.115 * 100 / HOURS_PER_MONTH, abs=1e-6)
    assert price.sources == [file_label()] and file_label() == f"shipped price file (dated {price_file()['dated']})"


def test_a_price_nobody_knows_is_unknown_and_says_why():
    # db.z1d: a class RDS has (docs: "Classes not listed were not confirmed and are left out") that neither the
    # limits table nor the price file holds
    odd = Configuration(name="x", db_instance_class="db.z1d.12xlarge", storage_type="gp3", allocated_gb=500,
                        storage_throughput=1000)
    price = PriceBook(client=None).configuration(odd, "postgres")
    assert price.per_hour_usd is None
    assert "instance: not in the shipped price file" in price.source
    assert price.detail()["throughput"]["usd_per_unit"] == 0.08  # gp3 above its 500 MiB/s: known, only the class is not
    oracle = PriceBook(client=None).configuration(
        Configuration(name="y", db_instance_class="db.m5.large", storage_type="gp3", allocated_gb=500), "oracle")
    assert oracle.per_hour_usd is None and "edition and licence model" in oracle.source


def test_another_region_never_borrows_us_east_1_file_prices():
    gp2 = Configuration(name="gp2", db_instance_class="db.t3.medium", storage_type="gp2", allocated_gb=100)
    price = PriceBook(client=None, region="eu-west-1").configuration(gp2, "postgres")
    assert price.per_hour_usd is None and "us-east-1 prices only" in price.source


def test_the_price_file_cites_its_sources_and_is_dated():
    f = price_file()
    assert f["dated"] and f["region"] == "us-east-1" and f["sources"]
    assert all(s["dated"] and s["snapshot"] and s["url"].startswith("https://") for s in f["sources"].values())
    assert any("aws.amazon.com/rds/postgresql/pricing/" in s["what"] for s in f["sources"].values())


def test_storage_listed_for_any_engine_is_found_too(client):
    with Stubber(client) as stub:
        expect(stub, [], productFamily="Database Storage", volumeType="General Purpose", databaseEngine="PostgreSQL",
               deploymentOption="Single-AZ", location="US East (Ohio)")
        expect(stub, [product("Database Storage", {"volumeType": "General Purpose", "databaseEngine": "Any"},
                              "GB-Mo", "0.1150000000")],
               productFamily="Database Storage", volumeType="General Purpose", databaseEngine="Any",
               deploymentOption="Single-AZ", location="US East (Ohio)")
        part = PriceBook(client=client, region="us-east-2").storage("gp2", 100, "postgres")
        stub.assert_no_pending_responses()
    assert part.usd_per_unit == 0.115 and part.source.startswith("AWS Price List API (US East (Ohio)")
