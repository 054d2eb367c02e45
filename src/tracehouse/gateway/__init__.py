"""The gateway (`tracehouse serve`): `sessions.import` over HTTP from every laptop of a team, in
front of one store, and a web view of every session. Loaded only by `serve` and its tests: the
CLI's other commands never import FastAPI."""
