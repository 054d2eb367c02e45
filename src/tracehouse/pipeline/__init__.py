"""Pipeline: discover → plan → parse → batch → sink; one sync path for backfill and live."""
