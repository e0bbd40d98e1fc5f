"""The built-in demo scenario: a small shop with concurrent sessions.

It touches every feature a first look should show: inserts, updates, deletes, a
multi-row insert, two sessions interleaving, a rolled-back transaction, a partial
rollback to a savepoint, several column types and a log switch.
"""

from __future__ import annotations

from replicator.redogen.scenario import ColumnSpec, Event, Scenario, TableSpec


def demo_scenario(version: str = "19", block_size: int = 512) -> Scenario:
    """A few dozen statements over two tables, in two archived logs."""
    customers = TableSpec(
        "SHOP",
        "CUSTOMERS",
        [
            ColumnSpec("ID", "NUMBER(10)", False),
            ColumnSpec("NAME", "VARCHAR2(60)"),
            ColumnSpec("EMAIL", "VARCHAR2(100)"),
            ColumnSpec("CREATED", "DATE"),
            ColumnSpec("BALANCE", "NUMBER(12,2)"),
        ],
        ["ID"],
    )
    orders = TableSpec(
        "SHOP",
        "ORDERS",
        [
            ColumnSpec("ID", "NUMBER", False),
            ColumnSpec("CUSTOMER_ID", "NUMBER(10)"),
            ColumnSpec("AMOUNT", "NUMBER(12,2)"),
            ColumnSpec("STATUS", "CHAR(8)"),
            ColumnSpec("PLACED", "TIMESTAMP(6) WITH TIME ZONE"),
            ColumnSpec("NOTE", "NVARCHAR2(40)"),
        ],
        ["ID"],
        supplemental="pk",
    )
    E = Event
    timeline = [
        E(
            "insert",
            1,
            "CUSTOMERS",
            {
                "ID": 1,
                "NAME": "Ada Lovelace",
                "EMAIL": "ada@example.com",
                "CREATED": "2024-12-10 09:30:00",
                "BALANCE": "120.50",
            },
        ),
        E("insert", 1, "CUSTOMERS", {"ID": 2, "NAME": "Alan Turing", "CREATED": "2025-01-02 14:00:00", "BALANCE": 0}),
        E(
            "insert",
            2,
            "ORDERS",
            {
                "ID": 100,
                "CUSTOMER_ID": 1,
                "AMOUNT": "42.00",
                "STATUS": "NEW",
                "PLACED": "2025-03-01 10:15:00.250000 +01:00",
                "NOTE": "gift wrap ✓",
            },
        ),
        E("commit", 1),
        E("update", 2, "ORDERS", key={"ID": 100}, values={"STATUS": "PAID"}, wait=1),
        E("commit", 2),
        E(
            "insert_many",
            3,
            "ORDERS",
            rows=[{"ID": 200 + i, "CUSTOMER_ID": 2, "AMOUNT": f"{i}.99", "STATUS": "NEW"} for i in range(5)],
        ),
        E("update", 1, "CUSTOMERS", key={"ID": 1}, values={"BALANCE": "78.50", "EMAIL": None}),
        E("commit", 3),
        E("delete", 4, "ORDERS", key={"ID": 203}),
        E("rollback", 4),
        E("commit", 1, wait=1),
        E("switch"),
        E("savepoint", 5, name="before_bulk"),
        E("insert", 5, "CUSTOMERS", {"ID": 3, "NAME": "Grace Hopper", "BALANCE": "10"}),
        E("savepoint", 5, name="after_grace"),
        E("delete", 5, "ORDERS", key={"ID": 201}),
        E("update", 5, "ORDERS", key={"ID": 202}, values={"AMOUNT": "0"}),
        E("rollback_to", 5, name="after_grace"),
        E("delete", 5, "ORDERS", key={"ID": 204}),
        E("commit", 5, wait=2),
    ]
    return Scenario(
        tables=[customers, orders],
        timeline=timeline,
        version=version,
        block_size=block_size,
        database="SHOPDB",
        name="DEMO",
    )
