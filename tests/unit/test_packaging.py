"""What each install gets: the CLI without database drivers or plotting; the Lambda layer in step."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_cli_extra_installs_no_database_driver_and_no_plotting():
    cli = names(PROJECT["dependencies"]) | names(PROJECT["optional-dependencies"]["cli"])
    assert cli.isdisjoint({"psycopg", "oracledb", "pygal", "jinja2", "aws-lambda-powertools", "moto", "pgserver"})
    assert {"click", "pydantic", "boto3"} <= cli


def test_the_lambda_layer_requirements_are_the_lambda_extra():
    layer = [line for line in (REPO / "lambdas" / "requirements.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    expected = PROJECT["optional-dependencies"]["lambda"] + [d for d in PROJECT["dependencies"]
                                                             if not d.startswith("boto3")]
    assert sorted(layer) == sorted(expected)
    # the layer ships an SDK whose RDS model has the storage progress fields (not the runtime's)
    assert "boto3>=1.43.62" in layer


def test_the_license_is_an_spdx_string_that_setuptools_reads_without_a_warning():
    """A TOML table (``license = {text = ...}``) makes setuptools >= 77 print a BuildBackendWarning
    ("`project.license` as a TOML table is deprecated") on every build: three times per ``make``
    install. PEP 639 / https://packaging.python.org/en/latest/guides/writing-pyproject-toml/#license:
    a string holding an SPDX expression, understood by setuptools 77.0.0 and later."""
    from packaging.licenses import canonicalize_license_expression

    build = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    assert isinstance(PROJECT["license"], str)
    assert canonicalize_license_expression(PROJECT["license"]) == PROJECT["license"] == "Apache-2.0"
    floor = next(r for r in build if r.startswith("setuptools"))
    assert tuple(int(x) for x in floor.split(">=")[1].split(".")[:1]) >= (77,), floor
    assert not any(c.startswith("License ::") for c in PROJECT.get("classifiers", []))  # refused with an SPDX string
