"""The shared parser kit: what every source repeats, written once (README.md here)."""
