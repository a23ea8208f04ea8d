"""Online RL on Waypoint's devices: an OpenEnv environment server with STAMP's rewards, and a
Gymnasium client (issue 38)."""
