"""The bottom layer: helpers that belong to no domain, which every app may use.

Nothing here imports an app of Waypoint or ``config`` beyond ``django.conf.settings``.
"""
