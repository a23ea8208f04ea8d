"""How Waypoint starts Chromium (the virtual device's screen, browser tests, benchmarks).

The machines Waypoint runs on may have no internet: without these flags Chromium keeps trying
to reach its update and sync services, and as root it needs ``--no-sandbox``.
"""

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
