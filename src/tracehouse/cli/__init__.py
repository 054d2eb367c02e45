"""Command-line interface: options → one library call → rendering."""
