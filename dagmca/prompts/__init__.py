"""Every prompt dagmca sends, and the output schemas of its structured calls."""
