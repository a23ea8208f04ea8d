"""The domain model: projects, tasks, trajectories, screens, steps and their labels.

Step references inside labels (subgoal ranges, memory-target steps, anchor steps) are step
indices, not foreign keys: they survive re-recording of a step's row, export and import
unchanged, and are checked by ``trajectories.validation``.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models

from .list_cache import ListedQuerySet


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    REVIEWER = "reviewer", "Reviewer"
    ADMIN = "admin", "Admin"


class Project(models.Model):
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="projects"
    )
    hide_gold = models.BooleanField(
        default=False,
        help_text="Hide gold answers and memory variables from annotators and reviewers: only "
        "the project's admins and site admins see them (trajectories/gold.py).",
    )
    list_version = models.PositiveBigIntegerField(
        default=0,
        editable=False,
        help_text="Raised after each committed change that the project's lists show "
        "(trajectories/list_cache.py).",
    )

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        # The version is only ever raised in the database: writing back the value this object
        # was loaded with would lower it, and lists kept for that old value would be served.
        if not self._state.adding and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [
                f.name
                for f in self._meta.concrete_fields
                if not f.primary_key and f.name != "list_version"
            ]
        super().save(*args, **kwargs)

    def role_of(self, user) -> str | None:
        if not user.is_authenticated:
            return None
        membership = self.memberships.filter(user=user).first()
        return membership.role if membership else None


class Membership(models.Model):
    # Indexed by membership_unique_user, which leads with it (as for the keys below).
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="memberships", db_index=False
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} as {self.role}"


class Intent(models.TextChoices):
    LOOKUP = "lookup", "Lookup"
    COMPARE = "compare_decide", "Compare & Decide"
    PURCHASE = "purchase_order", "Purchase / Order"
    BOOKING = "booking", "Booking"
    COMMUNICATION = "communication", "Communication"
    SHARING = "sharing", "Sharing"
    CONTENT_CREATION = "content_creation", "Content Creation"
    CONFIGURATION = "configuration", "Configuration"


class Difficulty(models.TextChoices):
    L1 = "L1", "L1"
    L2 = "L2", "L2"
    L3 = "L3", "L3"


class GradingRule(models.TextChoices):
    """How an answer is graded against the gold answer: ``trajectories.grading``."""

    EXACT = "exact", "Exact match"
    IEXACT = "iexact", "Exact match ignoring case"
    CONTAINS = "contains", "Contains the gold answer"
    NUMBER = "number", "Same number"
    REGEX = "regex", "Regular expression"


class Task(models.Model):
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="tasks", db_index=False
    )
    uid = models.CharField(max_length=64, help_text="Stable identity across imports and exports.")
    goal = models.TextField(help_text="The instruction given to the agent.")
    apps = models.JSONField(default=list, blank=True, help_text="Package names involved.")
    intent = models.CharField(max_length=32, choices=Intent.choices, blank=True)
    difficulty = models.CharField(max_length=2, choices=Difficulty.choices, blank=True)
    gold_answer = models.TextField(blank=True)
    grading_rule = models.CharField(
        max_length=8, choices=GradingRule.choices, default=GradingRule.EXACT
    )
    memory_items = models.JSONField(
        default=list,
        blank=True,
        help_text="What must be remembered: [{key, description, where}].",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ListedQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "uid"], name="task_unique_uid"),
            models.CheckConstraint(
                condition=models.Q(grading_rule__in=GradingRule.values),
                name="task_grading_rule_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.goal[:80]


class Source(models.TextChoices):
    RECORDED = "recorded", "Recorded"
    IMPORTED = "imported", "Imported"
    GENERATED = "generated", "Generated"
    AGENT = "agent", "Agent"  # an episode of an agent run on a device (agents/)
    SOLVER = "solver", "Solver"  # a scripted solver's episode: a verified demonstration
    EXPLORATION = "exploration", "Exploration"  # an episode of an app's exploration (explore/)
    ROLLOUT = "rollout", "Rollout"  # an episode a trainer drove through the RL server (rl/)


class Status(models.TextChoices):
    RECORDING = "recording", "Recording"
    INTERRUPTED = "interrupted", "Interrupted"
    ANNOTATING = "annotating", "Annotating"
    IN_REVIEW = "in_review", "In review"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class Outcome(models.TextChoices):
    SUCCESS = "success", "Success"
    FAILURE = "failure", "Failure"
    UNCERTAIN = "uncertain", "Uncertain"


class TrajectoryQuerySet(ListedQuerySet):
    def originals(self) -> TrajectoryQuerySet:
        """Without second annotators' copies: what lists and exports show."""
        return self.filter(copy_of__isnull=True)


class Trajectory(models.Model):
    # Indexed by the two indexes of Meta, which lead with it.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="trajectories", db_index=False
    )
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="trajectories")
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    device_serial = models.CharField(max_length=200, blank=True)
    device_model = models.CharField(max_length=200, blank=True)
    android_version = models.CharField(max_length=32, blank=True)
    screen_width = models.PositiveIntegerField(default=0)
    screen_height = models.PositiveIntegerField(default=0)
    density = models.PositiveIntegerField(default=0)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="recorded_trajectories",
    )
    recorder_name = models.CharField(
        max_length=150, blank=True, help_text="Who recorded it, as named where it was recorded."
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.RECORDED)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ANNOTATING)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.UNCERTAIN)
    final_screen = models.ForeignKey(
        "Screen", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    step_count = models.PositiveIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(
        default=1, help_text="Bumped by every label change; stale writes are refused."
    )
    copy_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="copies",
        help_text="The trajectory this one is a second annotator's copy of (double annotation).",
    )
    recorded_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TrajectoryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "trajectories"
        indexes = [
            models.Index(fields=["project", "status"]),
            # Lists page through a project's trajectories newest first: read in index order
            # instead of sorting every row of the project on each page.
            models.Index(fields=["project", "-created_at", "-id"], name="trajectory_list_order"),
        ]

    def __str__(self) -> str:
        return f"{self.task} ({self.uid})"

    @property
    def apps(self) -> list[str]:
        return self.metadata.get("apps", [])


def blob_storage_name(sha256: str, extension: str) -> str:
    return f"blobs/{sha256[:2]}/{sha256[2:4]}/{sha256}.{extension}"


class Blob(models.Model):
    """A content-addressed file in blob storage (screenshots, UI XML): stored once per sha256."""

    sha256 = models.CharField(max_length=64, primary_key=True)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "text/xml": "xml"}

    def __str__(self) -> str:
        return self.sha256

    @property
    def extension(self) -> str:
        return self.EXTENSIONS.get(self.content_type, "bin")

    @property
    def storage_name(self) -> str:
        return blob_storage_name(self.sha256, self.extension)

    @property
    def url(self) -> str:
        from django.urls import reverse

        return reverse("blob", args=[self.sha256])


class Screen(models.Model):
    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="screens")
    # Indexed in Meta: a key's own index on PostgreSQL comes with a second one for LIKE on
    # the blob's text key, which nothing asks and every imported screen paid for.
    screenshot = models.ForeignKey(Blob, on_delete=models.PROTECT, related_name="+", db_index=False)
    ui_xml = models.ForeignKey(
        Blob, null=True, blank=True, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    package = models.CharField(max_length=255, blank=True)
    activity = models.CharField(max_length=255, blank=True)
    captured_at = models.DateTimeField(null=True, blank=True)
    features = models.JSONField(
        default=dict,
        blank=True,
        help_text="Perceptual features for similarity (structure signature, image hash).",
    )
    visible_memory = models.JSONField(
        default=list,
        blank=True,
        help_text="Declared memory variables visible on this screen (virtual device).",
    )

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["screenshot"], name="screen_screenshot"),
            models.Index(fields=["ui_xml"], name="screen_ui_xml"),
        ]

    def __str__(self) -> str:
        return f"screen {self.pk} {self.package}"


class ActionType(models.TextChoices):
    CLICK = "click", "Click"
    LONG_PRESS = "long_press", "Long press"
    SWIPE = "swipe", "Swipe"
    TYPE = "type", "Type"
    KEY = "key", "Key"
    BACK = "back", "Back"
    HOME = "home", "Home"
    ENTER = "enter", "Enter"
    OPEN_APP = "open_app", "Open app"
    WAIT = "wait", "Wait"
    ANSWER = "answer", "Answer"
    TERMINATE = "terminate", "Terminate"


class Step(models.Model):
    # Indexed by step_unique_index, which leads with it (as for the labels below).
    trajectory = models.ForeignKey(
        Trajectory, on_delete=models.CASCADE, related_name="steps", db_index=False
    )
    index = models.PositiveIntegerField()
    screen = models.ForeignKey(
        Screen, on_delete=models.CASCADE, related_name="steps", help_text="Screen before."
    )
    action_type = models.CharField(max_length=16, choices=ActionType.choices)
    action = models.JSONField(
        default=dict, help_text="The action's fields in pixels of the step's screenshot."
    )
    target = models.JSONField(
        null=True,
        blank=True,
        help_text="Target element: bounds, resource_id, class, text, content_desc, path.",
    )
    thought = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    memory = models.TextField(blank=True)
    trainable = models.BooleanField(default=True)
    action_sent_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["trajectory", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "index"], name="step_unique_index")
        ]

    def __str__(self) -> str:
        return f"step {self.index} {self.action_type}"

    @property
    def settle_ms(self) -> int | None:
        if self.action_sent_at and self.settled_at:
            return int((self.settled_at - self.action_sent_at).total_seconds() * 1000)
        return None


class SubgoalSuccess(models.TextChoices):
    YES = "yes", "Yes"
    NO = "no", "No"
    UNCERTAIN = "uncertain", "Uncertain"


class Subgoal(models.Model):
    trajectory = models.ForeignKey(
        Trajectory, on_delete=models.CASCADE, related_name="subgoals", db_index=False
    )
    start = models.PositiveIntegerField(help_text="First step index (inclusive).")
    end = models.PositiveIntegerField(help_text="Last step index (inclusive).")
    text = models.TextField(blank=True, help_text="The subgoal's intent.")
    effect = models.TextField(blank=True)
    behaviour = models.TextField(blank=True)
    success = models.CharField(max_length=16, choices=SubgoalSuccess.choices, blank=True)
    origin = models.CharField(max_length=100, default="human")

    class Meta:
        ordering = ["trajectory", "start"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(start__lte=models.F("end")), name="subgoal_start_not_after_end"
            ),
            models.UniqueConstraint(fields=["trajectory", "start"], name="subgoal_unique_start"),
            models.CheckConstraint(
                condition=models.Q(success__in=["", *SubgoalSuccess.values]),
                name="subgoal_success_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.start}, {self.end}] {self.text[:60]}"


class MemoryTarget(models.Model):
    trajectory = models.ForeignKey(
        Trajectory, on_delete=models.CASCADE, related_name="memory_targets"
    )
    key = models.CharField(max_length=200)
    value = models.TextField()
    encode_step = models.PositiveIntegerField(help_text="Step whose screen shows the value.")
    evidence = models.JSONField(default=dict, blank=True, help_text="Element bounds / XML node.")
    retrieve_steps = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["trajectory", "encode_step", "key"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(key=""), name="memorytarget_key_not_empty")
        ]

    def __str__(self) -> str:
        return f"{self.key}={self.value[:40]}"


class AnchorType(models.TextChoices):
    SUBGOAL = "subgoal", "Subgoal"
    STATE_CHANGE = "state_change", "State change"
    DEPENDENCY = "dependency", "Dependency"
    EXCEPTION = "exception", "Exception"
    CONTEXT_INFO = "context_info", "Context info"
    FINISH = "finish", "Finish"


class Anchor(models.Model):
    trajectory = models.ForeignKey(
        Trajectory, on_delete=models.CASCADE, related_name="anchors", db_index=False
    )
    key = models.CharField(max_length=64, help_text="Identity within the trajectory, e.g. a3.")
    step_index = models.PositiveIntegerField()
    type = models.CharField(max_length=16, choices=AnchorType.choices)
    content = models.TextField()
    description = models.TextField(blank=True)
    evidence = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["trajectory", "step_index", "id"]
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "key"], name="anchor_unique_key"),
            models.CheckConstraint(
                condition=models.Q(type__in=AnchorType.values), name="anchor_type_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} {self.type}@{self.step_index}"


class Relation(models.TextChoices):
    PREREQUISITE = "prerequisite", "Prerequisite"
    ENABLES = "enables", "Enables"
    RESULT_OF = "result_of", "Result of"
    BLOCKS = "blocks", "Blocks"


class AnchorLink(models.Model):
    source = models.ForeignKey(
        Anchor, on_delete=models.CASCADE, related_name="links_out", db_index=False
    )
    target = models.ForeignKey(Anchor, on_delete=models.CASCADE, related_name="links_in")
    relation = models.CharField(max_length=16, choices=Relation.choices)
    critical = models.BooleanField(default=False)

    class Meta:
        ordering = ["source", "target"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "target", "relation"], name="anchorlink_unique"
            ),
            models.CheckConstraint(
                condition=~models.Q(source=models.F("target")), name="anchorlink_not_to_itself"
            ),
            models.CheckConstraint(
                condition=models.Q(relation__in=Relation.values), name="anchorlink_relation_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source.key} -{self.relation}-> {self.target.key}"


class AuditEvent(models.Model):
    """Who changed what, when, with the state before and after."""

    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="audit_events"
    )
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.CASCADE, related_name="audit_events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)
    kind = models.CharField(max_length=64)
    object_type = models.CharField(max_length=64, blank=True)
    object_id = models.CharField(max_length=64, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind}"


class LabelEdit(models.Model):
    """One entry of a trajectory's undo stack: the audit event holds the labels before/after.

    Undone entries form the redo stack until a new edit clears it. (The table keeps the name
    it had when the undo stack lived in ``annotate``.)
    """

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="+")
    event = models.ForeignKey(AuditEvent, on_delete=models.CASCADE, related_name="+")
    undone = models.BooleanField(default=False)

    class Meta:
        db_table = "annotate_labeledit"
        ordering = ["trajectory", "id"]
        indexes = [
            models.Index(
                fields=["trajectory", "undone", "id"], name="annotate_la_traject_924fd8_idx"
            )
        ]

    def __str__(self) -> str:
        return f"edit {self.event_id}{' (undone)' if self.undone else ''}"


class JobKind(models.TextChoices):
    IMPORT = "import", "Import"
    EXPORT = "export", "Export"
    PROPOSE = "propose", "Proposals"
    MEMORY_GRAPH = "memory_graph", "Memory graph"
    APP_GRAPH = "app_graph", "App graph"
    AGENT_RUN = "agent_run", "Agent run"
    EXPLORE = "explore", "Exploration"
    GENERATE = "generate", "Environments"


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class Job(models.Model):
    """An import, export or proposal run by a Celery worker, with progress for the page and the
    API. A proposal job's ``format`` is the proposer's name."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=16, choices=JobKind.choices)
    format = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    params = models.JSONField(default=dict, blank=True)
    input_path = models.CharField(max_length=500, blank=True)
    output_path = models.CharField(max_length=500, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # While running, the worker touches heartbeat_at; a running job whose heartbeat is older
    # than WAYPOINT_JOB_STALE_S lost its worker and is requeued or failed by the reaper.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)  # host and pid of the last runner
    attempts = models.PositiveIntegerField(default=0)  # runs started, redeliveries included

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat")]

    def __str__(self) -> str:
        return f"{self.kind} {self.format} #{self.pk} {self.status}"

    @property
    def percent(self) -> int:
        if self.status == JobStatus.SUCCEEDED:
            return 100
        if not self.total:
            return 0
        return min(100, int(100 * self.done / self.total))

    @property
    def is_finished(self) -> bool:
        return self.status in (JobStatus.SUCCEEDED, JobStatus.FAILED)
