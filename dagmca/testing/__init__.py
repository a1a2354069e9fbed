"""Test suites dagmca ships for what a user hands in: `GraphStoreContract`, the tests
every `GraphStore` must pass, run by dagmca against its SQLite and Bolt stores and by a
store's author against theirs (subclass it and give it a `store` fixture; see
`dagmca.testing.store_contract`). Importing this module does not import pytest; running
the suite needs it (`pip install "dagmca[test]"`, or pytest alone)."""

from dagmca.testing.store_contract import GraphStoreContract

__all__ = ["GraphStoreContract"]
