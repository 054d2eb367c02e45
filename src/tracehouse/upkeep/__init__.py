"""Ledger upkeep over any store: verify, copy between stores, delete and restore sessions."""
