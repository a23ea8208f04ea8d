"""A trajectory's labels and the one way they change.

- :mod:`.parts`: the labels as plain JSON, part by part, and how a part is put back (snapshots
  for audit events and undo; rows for import, copies and recording).
- :mod:`.protocol`: the edit protocol every label change runs through (lock, version check,
  status check, audit event, undo, redo, revert).
- :mod:`.edits`: the edits themselves, one ``do_*`` function per change of a subgoal, a step,
  a memory target, an anchor, a link or a note.
"""
