"""Where a Bolt store is and as whom to connect: parsed from a URI and the environment,
with the password kept out of every message."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from dagmca.errors import UserError

BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def is_bolt_uri(location: str) -> bool:
    return location.split("://", 1)[0] in BOLT_SCHEMES and "://" in location


@dataclass(frozen=True)
class BoltTarget:
    """Where and as whom to connect. `password` never reaches `location` or a message."""

    uri: str
    user: str
    password: str | None
    database: str | None

    @property
    def location(self) -> str:
        return f"{self.uri}/{self.database}" if self.database else self.uri

    def __repr__(self) -> str:  # keeps the password out of tracebacks and logs
        return f"BoltTarget({self.location!r}, user={self.user!r})"

    @classmethod
    def parse(cls, location: str, env: dict[str, str] | None = None) -> BoltTarget:
        """`scheme://[user[:password]@]host[:port][/database]`; NEO4J_USER,
        NEO4J_PASSWORD and NEO4J_DATABASE fill what the URI leaves out."""
        env = dict(os.environ) if env is None else env
        parts = urlsplit(location)
        if not parts.hostname:
            raise UserError(f"bad Neo4j URI {cls._safe(location)}", "expected bolt://host:7687")
        try:
            port = parts.port
        except ValueError:
            raise UserError(
                f"bad port in Neo4j URI {cls._safe(location)}", "expected bolt://host:7687"
            ) from None
        netloc = parts.hostname + (f":{port}" if port else "")
        database = parts.path.strip("/") or env.get("NEO4J_DATABASE") or None
        return cls(
            uri=urlunsplit((parts.scheme, netloc, "", "", "")),
            user=parts.username or env.get("NEO4J_USER") or "neo4j",
            password=parts.password or env.get("NEO4J_PASSWORD") or None,
            database=database,
        )

    @staticmethod
    def _safe(location: str) -> str:
        scheme, _, rest = location.partition("://")
        return f"{scheme}://{rest.rsplit('@', 1)[-1]}"
