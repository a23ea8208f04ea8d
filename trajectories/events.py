"""Every kind of audit event, by name.

``record_event`` is called with one of these constants, never with a string written in place:
a typo becomes an import error, and two pages cannot name the same change differently (a
memory target added from the recording console and from the annotation workspace is one kind).
"""

from __future__ import annotations

# projects and imports
PROJECT_CREATED = "project.created"
PROJECT_SETTINGS_CHANGED = "project.settings_changed"  # e.g. hide_gold
MEMBERSHIP_SET = "membership.set"
MEMBERSHIP_REMOVED = "membership.removed"
TRAJECTORY_IMPORTED = "trajectory.imported"
TRAJECTORY_COPIED = "trajectory.copied"

# accounts (site admins)
USER_CREATED = "user.created"
PASSWORD_LINK_CREATED = "user.password_link_created"  # a one-time set-password link handed out

# jobs
JOB_IMPORT_QUEUED = "job.import_queued"
JOB_EXPORT_QUEUED = "job.export_queued"
JOB_PROPOSALS_QUEUED = "job.proposals_queued"
JOB_MEMORY_GRAPH_QUEUED = "job.memory_graph_queued"
JOB_APP_GRAPH_QUEUED = "job.app_graph_queued"
JOB_AGENT_RUN_QUEUED = "job.agent_run_queued"
JOB_EXPLORATION_QUEUED = "job.exploration_queued"
EXPLORATION_STOP_ASKED = "exploration.stop_asked"
JOB_REQUEUED = "job.requeued"
JOB_RETRIED = "job.retried"
JOB_SUCCEEDED = "job.succeeded"
JOB_FAILED = "job.failed"
JOB_ENDED = {"succeeded": JOB_SUCCEEDED, "failed": JOB_FAILED}  # by the job's final status

# graphs
MEMORY_GRAPH_IMPORTED = "memory_graph.imported"

# devices
DEVICE_TAKEN = "device.taken"
DEVICE_RELEASED = "device.released"
DEVICE_LEASE_EXPIRED = "device.lease_expired"
DEVICE_UPDATED = "device.updated"

# recording
RECORDING_STARTED = "trajectory.recording_started"
RECORDING_RESUMED = "trajectory.recording_resumed"
RECORDING_FINISHED = "trajectory.recording_finished"
TRAJECTORY_INTERRUPTED = "trajectory.interrupted"
STEP_RECORDED = "step.recorded"
STEP_UNDONE = "step.undone"

# labels (every one goes through trajectories.labels.protocol: versioned and undoable)
STEP_UPDATED = "step.updated"
SUBGOAL_SPLIT = "subgoal.split"
SUBGOAL_MERGED = "subgoal.merged"
SUBGOAL_BOUNDARY_MOVED = "subgoal.boundary_moved"
SUBGOAL_UPDATED = "subgoal.updated"
SUBGOAL_DELETED = "subgoal.deleted"
MEMORY_TARGET_ADDED = "memory_target.added"
MEMORY_TARGET_UPDATED = "memory_target.updated"
MEMORY_TARGET_DELETED = "memory_target.deleted"
ANCHOR_ADDED = "anchor.added"
ANCHOR_UPDATED = "anchor.updated"
ANCHOR_DELETED = "anchor.deleted"
ANCHOR_LINK_ADDED = "anchor_link.added"
ANCHOR_LINK_DELETED = "anchor_link.deleted"
NOTE_ADDED = "trajectory.note_added"
LABELS_UNDONE = "labels.undone"
LABELS_REDONE = "labels.redone"
LABELS_REVERTED = "labels.reverted"  # one earlier change put back, not the last
# what the labels said about a recorded step that is undone while recording (values it encoded
# set aside, its index out of retrieve steps): one edit, undoable and revertable
STEP_UNDONE_LABELS = "labels.step_undone"
# memory targets and step memory read off a virtual device's known variables (origin: the
# environment, not a person): edits like any other, which never replace a person's label
MEMORY_FROM_ENVIRONMENT = "labels.memory_from_environment"

# review and assignment
TRAJECTORY_SUBMITTED = "trajectory.submitted"
REVIEW_COMMENTED = "review.commented"
REVIEW_COMMENT_RESOLVED = "review.comment_resolved"  # one comment, by the one who fixed it
REVIEW_COMMENT_REOPENED = "review.comment_reopened"
REVIEW_APPROVED = "review.approve"
REVIEW_REJECTED = "review.reject"
REVIEW_SENT_BACK = "review.send_back"
REVIEW_DECIDED = {
    "approve": REVIEW_APPROVED,
    "reject": REVIEW_REJECTED,
    "send_back": REVIEW_SENT_BACK,
}
PROPOSAL_REQUESTED = "proposal.requested"
PROPOSAL_FAILED = "proposal.failed"
PROPOSAL_ACCEPTED = "proposal.accepted"  # a label edit: proposed items become labels
PROPOSAL_REJECTED = "proposal.rejected"
ASSIGNMENT_ADDED = "assignment.added"
ASSIGNMENT_REMOVED = "assignment.removed"

# agents on devices
SUITE_IMPORTED = "suite.imported"
EPISODE_RERUN = "episode.rerun"  # its worker was lost: the episode runs again, counted once
ENDPOINT_REGISTERED = "endpoint.registered"  # a named model endpoint (never its key)
ENDPOINT_REMOVED = "endpoint.removed"

# environments generated as app packages (issue 37)
JOB_GENERATION_QUEUED = "job.generation_queued"
# a verified run made training data: each step's reasoning written by a model, and the step
# critic's verdicts (a rejected step is masked: not trainable); labels of the environment's
# pipeline, not of a person
REASONING_SYNTHESIZED = "labels.reasoning_synthesized"
STEP_CRITIC = "labels.step_critic"

# app knowledge graphs (UI-KOBE)
APP_GRAPH_IMPORTED = "app_graph.imported"

ALL = frozenset(
    value for name, value in dict(globals()).items() if name.isupper() and isinstance(value, str)
)

# A person at work on a trajectory: recording, labelling, submitting, reviewing. Their times
# are what a project's progress page adds up into sessions of active work.
WORK = frozenset(
    {
        RECORDING_STARTED,
        RECORDING_RESUMED,
        RECORDING_FINISHED,
        STEP_RECORDED,
        STEP_UNDONE,
        STEP_UNDONE_LABELS,
        STEP_UPDATED,
        SUBGOAL_SPLIT,
        SUBGOAL_MERGED,
        SUBGOAL_BOUNDARY_MOVED,
        SUBGOAL_UPDATED,
        SUBGOAL_DELETED,
        MEMORY_TARGET_ADDED,
        MEMORY_TARGET_UPDATED,
        MEMORY_TARGET_DELETED,
        ANCHOR_ADDED,
        ANCHOR_UPDATED,
        ANCHOR_DELETED,
        ANCHOR_LINK_ADDED,
        ANCHOR_LINK_DELETED,
        NOTE_ADDED,
        LABELS_UNDONE,
        LABELS_REDONE,
        LABELS_REVERTED,
        PROPOSAL_ACCEPTED,
        PROPOSAL_REJECTED,
        TRAJECTORY_SUBMITTED,
        REVIEW_COMMENTED,
        REVIEW_COMMENT_RESOLVED,
        REVIEW_COMMENT_REOPENED,
        REVIEW_APPROVED,
        REVIEW_REJECTED,
        REVIEW_SENT_BACK,
    }
)
