"""Exports: the ledger rendered as transcripts, JSON and other formats."""
