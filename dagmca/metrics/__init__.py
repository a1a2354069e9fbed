"""Emergence metrics: pure measures, and their computation for a stored session."""
