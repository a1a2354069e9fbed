"""The `dagmca` command line."""
