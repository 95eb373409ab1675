"""The run input's ``target``: the RDS instance, its secret's ARN (never the secret), what to connect to and
which databases to read."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    Tag,
)

from cutover_prep.models.fields import (
    DB_IDENTIFIER,
    SECRET_ARN,
    Arn,
    EngineName,
    Host,
    Identifier,
    Name,
    _matching,
    _Strict,
)


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
