"""Memory graphs built from a project's trajectories.

The subgoal memory graph (``build``, ``retrieve``) merges screens into states and keeps the
subgoals tried from each state; the app knowledge graph (UI-KOBE) keeps single-action
transitions per app. Both are versioned per project and stored as files that load fast.
"""
