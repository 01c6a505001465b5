"""The remote side of `--remote` (the bridge) and the commands that move work between machines
(docs/remote.md). The local side, how a client dials through ssh, is `client/remote.py`."""
