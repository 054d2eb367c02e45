"""Reports over the ledger: the shared session filters and token usage with cost."""
