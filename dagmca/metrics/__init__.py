"""Emergence metrics (DESIGN §5): pure measures, and their computation for a stored session."""
