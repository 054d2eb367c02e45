"""`tracehouse doctor`: one screen of checks, each ok / warn / fail with the fix.

The checks read, never write: the ledger is opened without migrating or creating it, sources
are listed and stat'ed as a sync would plan them, and the machine's limits come from `Host`
(tests point it at a home built to trip each check).
"""

from tracehouse.doctor.findings import Finding, Host
from tracehouse.doctor.run import diagnose

__all__ = ["Finding", "Host", "diagnose"]
