"""Exports of a stored session."""
