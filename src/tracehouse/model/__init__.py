"""The normalized model: table declarations, ids, fingerprints and the import contract."""
