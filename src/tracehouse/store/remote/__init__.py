"""A gateway as the store sync writes to (`--store https://…`)."""
