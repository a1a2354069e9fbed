"""Cypher's temporal values on the embedded store: dates, times, datetimes (local and
zoned) and durations as Neo4j has them, to the nanosecond; their constructors,
components, order, arithmetic, truncation and durations between them."""

from dagmca.store.embedded.temporal.arithmetic import add, divide, multiply, subtract
from dagmca.store.embedded.temporal.build import statement_now
from dagmca.store.embedded.temporal.fields import component
from dagmca.store.embedded.temporal.functions import TEMPORAL
from dagmca.store.embedded.temporal.values import (
    SORT_RANK,
    Date,
    DateTime,
    Duration,
    LocalDateTime,
    LocalTime,
    Temporal,
    TemporalError,
    Time,
    compare,
    from_python,
    order_key,
    text,
    to_python,
)

__all__ = [
    "SORT_RANK",
    "TEMPORAL",
    "Date",
    "DateTime",
    "Duration",
    "LocalDateTime",
    "LocalTime",
    "Temporal",
    "TemporalError",
    "Time",
    "add",
    "compare",
    "component",
    "divide",
    "from_python",
    "multiply",
    "order_key",
    "statement_now",
    "subtract",
    "text",
    "to_python",
]
