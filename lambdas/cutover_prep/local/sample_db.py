"""A generated sample database: the default target of the local run and of the tests.

Several schemas, a range-partitioned table with a partitioned index, a TOAST-heavy
table (values stored out of line), a materialized view, a sequence, and objects with
hostile names (quotes, mixed case, ``$``, ``#``, spaces, unicode) — everything the
PostgreSQL engine must cover. Only ever written into a database this module creates.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

HOSTILE_SCHEMA = 'Mixed "Case" $chema'
HOSTILE_TABLE = 'Weird "Name" #1 naïve'


def create_sample(conninfo: str, *, size_mb: int = 300) -> dict[str, int]:
    """Fill the (empty) database at ``conninfo`` with about ``size_mb`` of data; return row counts."""
    order_rows = max(2_000, size_mb * 1024 * 1024 * 55 // 100 // 140)
    doc_rows = max(200, size_mb * 1024 * 1024 * 30 // 100 // 4200)
    emp_rows = max(1_000, size_mb * 1024 * 1024 * 5 // 100 // 120)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for schema in ("sales", "docs", "hr"):
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute("""
            CREATE TABLE sales.orders (
                order_id bigint NOT NULL, customer_id int NOT NULL, order_date date NOT NULL,
                amount numeric(12,2), note text, PRIMARY KEY (order_id, order_date)
            ) PARTITION BY RANGE (order_date)""")
        for year in (2023, 2024, 2025, 2026):
            conn.execute(sql.SQL(
                "CREATE TABLE sales.{} PARTITION OF sales.orders FOR VALUES FROM ({}) TO ({})"
            ).format(sql.Identifier(f"orders_{year}"), sql.Literal(f"{year}-01-01"),
                     sql.Literal(f"{year + 1}-01-01")))
        conn.execute("""
            INSERT INTO sales.orders
            SELECT g, (g::bigint * 7919) %% 50000, DATE '2023-01-01' + (g %% 1460),
                   (g %% 100000) / 100.0, md5(g::text) || md5((g + 1)::text)
            FROM generate_series(1, %s) AS g""", (order_rows,))
        conn.execute("CREATE INDEX orders_customer_idx ON sales.orders (customer_id)")
        conn.execute("""
            CREATE TABLE docs.documents (doc_id int PRIMARY KEY, title text NOT NULL, body text NOT NULL)""")
        conn.execute("ALTER TABLE docs.documents ALTER COLUMN body SET STORAGE EXTERNAL")
        conn.execute("""
            INSERT INTO docs.documents
            SELECT g, 'document ' || g,
                   (SELECT string_agg(md5(g::text || ':' || i), '') FROM generate_series(1, 128) AS i)
            FROM generate_series(1, %s) AS g""", (doc_rows,))
        conn.execute("CREATE SEQUENCE hr.employee_seq")
        conn.execute("""
            CREATE TABLE hr.employees (
                employee_id int PRIMARY KEY DEFAULT nextval('hr.employee_seq'), dept int NOT NULL,
                name text NOT NULL, salary numeric(10,2) NOT NULL)""")
        conn.execute("""
            INSERT INTO hr.employees (dept, name, salary)
            SELECT g %% 40, 'employee ' || g, 30000 + (g %% 700) * 100 FROM generate_series(1, %s) AS g""",
                     (emp_rows,))
        conn.execute("CREATE INDEX employees_dept_idx ON hr.employees (dept)")
        conn.execute("""
            CREATE MATERIALIZED VIEW hr.salary_by_dept AS
            SELECT dept, count(*) AS people, sum(salary) AS total FROM hr.employees GROUP BY dept""")
        schema, table = sql.Identifier(HOSTILE_SCHEMA), sql.Identifier(HOSTILE_SCHEMA, HOSTILE_TABLE)
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(schema))
        conn.execute(sql.SQL('CREATE TABLE {} ("Id" int PRIMARY KEY, "da$h#" text)').format(table))
        conn.execute(sql.SQL("INSERT INTO {} SELECT g, repeat('x', 200) FROM generate_series(1, 2000) g")
                     .format(table))
        conn.execute("VACUUM ANALYZE")  # visibility maps and free space maps, so every fork exists
    return {"sales.orders": order_rows, "docs.documents": doc_rows, "hr.employees": emp_rows}
