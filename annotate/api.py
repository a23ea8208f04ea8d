"""The labels API: every workspace edit, for scripts, under ``/api/v1/``.

Views are thin: ``access_labels`` (outsiders 404, missing role 403) → a ``do_*`` service →
the trajectory's labels with the new version. A stale ``version`` is a 409 with the stored
version, so a script can reload and retry.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.contrib.auth import get_user_model
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from trajectories.api import WaypointAPIView, check_serializer, job_response
from trajectories.labels import edits, protocol
from trajectories.labels.cache import kept_at_version
from trajectories.labels.parts import with_steps
from trajectories.models import AuditEvent, Trajectory
from trajectories.serializers import ErrorSerializer, JobSerializer
from trajectories.validation import InvalidData, InvalidRequest

from . import services as s
from .agreement import Counts, project_agreement
from .completeness import problems_of
from .models import Assignment, Proposal, ReviewComment
from .permissions import EDIT, RESOLVE, REVIEW, access_assignments, access_labels
from .serializers import (
    AcceptedLabelsSerializer,
    AgreementSerializer,
    AnchorPatchSerializer,
    AnchorRequestSerializer,
    AssignmentSerializer,
    AssignRequestSerializer,
    CommentResolveSerializer,
    CommentSerializer,
    HistoryEventSerializer,
    LabelsSerializer,
    LinkRequestSerializer,
    MemoryTargetPatchSerializer,
    MemoryTargetRequestSerializer,
    ProposalAcceptSerializer,
    ProposalDecisionSerializer,
    ProposalSerializer,
    ProposeRequestSerializer,
    ReviewCommentRequestSerializer,
    ReviewRequestSerializer,
    SplitRequestSerializer,
    StaleSerializer,
    StepPatchSerializer,
    SubgoalPatchSerializer,
    TrajectoryProposeRequestSerializer,
    VersionSerializer,
)

DESCRIBED = {
    400: "Invalid input or a broken rule; the message names the field.",
    401: "Not authenticated.",
    403: "The user's role does not allow this.",
    404: "No such object, or not one of the user's projects.",
    422: "Well-formed, but against the stored data (e.g. a comment of another trajectory).",
}
VERSION_PARAM = OpenApiParameter(
    "version", int, required=True, description="The trajectory version this edit applies to."
)


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    found = {c: OpenApiResponse(ErrorSerializer, description=DESCRIBED[c]) for c in codes}
    return found


EDIT_ERRORS = {
    **errors(400, 401, 403, 404),
    409: OpenApiResponse(StaleSerializer, description="Someone changed the trajectory first."),
}


def labels_data(trajectory: Trajectory) -> dict[str, Any]:
    kept = kept_at_version(trajectory, "labels", "step_labels")
    labels = with_steps(kept["labels"], kept["step_labels"])
    problems = problems_of(
        trajectory.step_count,
        labels["subgoals"],
        labels["memory_targets"],
        labels["anchors"],
        labels["links"],
    )
    return {
        "version": trajectory.version,
        "status": trajectory.status,
        **protocol.undo_state(trajectory),
        **labels,
        "problems": [asdict(p) for p in problems],
    }


class LabelsAPIView(WaypointAPIView):
    """A stale version answers 409 with the stored version (config/errors.py)."""

    def edit(self, request: Request, trajectory_id: int, serializer_class, run) -> Response:
        """Check access and the request, run the edit, answer with the labels."""
        trajectory, _ = access_labels(request.user, trajectory_id, EDIT)
        data = dict(check_serializer(serializer_class(data=request.data)))
        version = data.pop("version")
        run(trajectory, version, data)
        return Response(labels_data(trajectory))

    def delete_edit(self, request: Request, trajectory_id: int, run) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id, EDIT)
        try:
            version = int(request.query_params.get("version", ""))
        except ValueError:
            raise InvalidRequest("version: send ?version=<the version you edited>") from None
        run(trajectory, version)
        return Response(labels_data(trajectory))


TAGS = ["labels"]


@extend_schema(tags=TAGS)
class LabelsView(LabelsAPIView):
    """All labels of a trajectory, its version and what is missing before submission."""

    @extend_schema(
        summary="A trajectory's labels", responses={200: LabelsSerializer, **errors(401, 404)}
    )
    def get(self, request: Request, trajectory_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id)
        return Response(labels_data(trajectory))


@extend_schema(tags=TAGS)
class SplitView(LabelsAPIView):
    """Start a subgoal at a step (splitting the subgoal around it, or covering free steps)."""

    @extend_schema(
        summary="Split subgoals at a step",
        request=SplitRequestSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            SplitRequestSerializer,
            lambda t, v, d: edits.do_split_subgoal(t, request.user, v, d["step"]),
        )


@extend_schema(tags=TAGS)
class MergeView(LabelsAPIView):
    """Merge a subgoal with the next one."""

    @extend_schema(
        summary="Merge a subgoal with the next",
        request=VersionSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int, subgoal_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            VersionSerializer,
            lambda t, v, d: edits.do_merge_subgoals(t, request.user, v, subgoal_id),
        )


def _patch_subgoal(trajectory, actor, version, subgoal_id, data) -> None:
    bounds = {k: data.pop(k) for k in ("start", "end") if k in data}
    if bounds:
        edits.do_move_boundary(trajectory, actor, version, subgoal_id, **bounds)
        version = trajectory.version
    if data or not bounds:
        edits.do_update_subgoal(trajectory, actor, version, subgoal_id, data)


@extend_schema(tags=TAGS)
class SubgoalView(LabelsAPIView):
    """Edit a subgoal's fields or boundaries, or delete it."""

    @extend_schema(
        summary="Edit a subgoal (fields, or start/end to move a boundary)",
        request=SubgoalPatchSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def patch(self, request: Request, trajectory_id: int, subgoal_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            SubgoalPatchSerializer,
            lambda t, v, d: _patch_subgoal(t, request.user, v, subgoal_id, d),
        )

    @extend_schema(
        summary="Delete a subgoal",
        parameters=[VERSION_PARAM],
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def delete(self, request: Request, trajectory_id: int, subgoal_id: int) -> Response:
        return self.delete_edit(
            request,
            trajectory_id,
            lambda t, v: edits.do_delete_subgoal(t, request.user, v, subgoal_id),
        )


@extend_schema(tags=TAGS)
class StepLabelView(LabelsAPIView):
    """A step's thought, summary, memory text and trainable flag."""

    @extend_schema(
        summary="Edit a step's labels",
        request=StepPatchSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def patch(self, request: Request, trajectory_id: int, index: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            StepPatchSerializer,
            lambda t, v, d: edits.do_update_step(t, request.user, v, index, d),
        )


@extend_schema(tags=TAGS)
class MemoryTargetListView(LabelsAPIView):
    """Add a memory target: a value seen at one step and needed at later ones."""

    @extend_schema(
        summary="Add a memory target",
        request=MemoryTargetRequestSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            MemoryTargetRequestSerializer,
            lambda t, v, d: edits.do_add_memory_target(t, request.user, v, **d),
        )


@extend_schema(tags=TAGS)
class MemoryTargetView(LabelsAPIView):
    """Edit or delete a memory target."""

    @extend_schema(
        summary="Edit a memory target",
        request=MemoryTargetPatchSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def patch(self, request: Request, trajectory_id: int, target_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            MemoryTargetPatchSerializer,
            lambda t, v, d: edits.do_update_memory_target(t, request.user, v, target_id, d),
        )

    @extend_schema(
        summary="Delete a memory target",
        parameters=[VERSION_PARAM],
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def delete(self, request: Request, trajectory_id: int, target_id: int) -> Response:
        return self.delete_edit(
            request,
            trajectory_id,
            lambda t, v: edits.do_delete_memory_target(t, request.user, v, target_id),
        )


@extend_schema(tags=TAGS)
class AnchorListView(LabelsAPIView):
    """Add an anchor on a step; its key (a1, a2, ...) is chosen for it."""

    @extend_schema(
        summary="Add an anchor",
        request=AnchorRequestSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            AnchorRequestSerializer,
            lambda t, v, d: edits.do_add_anchor(t, request.user, v, **d),
        )


@extend_schema(tags=TAGS)
class AnchorView(LabelsAPIView):
    """Edit or delete an anchor (by key); deleting it deletes its links."""

    @extend_schema(
        summary="Edit an anchor",
        request=AnchorPatchSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def patch(self, request: Request, trajectory_id: int, key: str) -> Response:
        return self.edit(
            request,
            trajectory_id,
            AnchorPatchSerializer,
            lambda t, v, d: edits.do_update_anchor(t, request.user, v, key, d),
        )

    @extend_schema(
        summary="Delete an anchor and its links",
        parameters=[VERSION_PARAM],
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def delete(self, request: Request, trajectory_id: int, key: str) -> Response:
        return self.delete_edit(
            request,
            trajectory_id,
            lambda t, v: edits.do_delete_anchor(t, request.user, v, key),
        )


@extend_schema(tags=TAGS)
class AnchorLinkListView(LabelsAPIView):
    """Add a typed causal link between two anchors."""

    @extend_schema(
        summary="Link two anchors",
        request=LinkRequestSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            LinkRequestSerializer,
            lambda t, v, d: edits.do_add_anchor_link(t, request.user, v, **d),
        )


@extend_schema(tags=TAGS)
class AnchorLinkView(LabelsAPIView):
    """Delete a link between anchors."""

    @extend_schema(
        summary="Delete a link",
        parameters=[VERSION_PARAM],
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def delete(self, request: Request, trajectory_id: int, link_id: int) -> Response:
        return self.delete_edit(
            request,
            trajectory_id,
            lambda t, v: edits.do_delete_anchor_link(t, request.user, v, link_id),
        )


@extend_schema(tags=TAGS)
class UndoView(LabelsAPIView):
    """Undo the trajectory's last label edit, as a new edit (nothing to undo: no change)."""

    @extend_schema(
        summary="Undo the last label edit",
        request=VersionSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            VersionSerializer,
            lambda t, v, d: protocol.do_undo(t, request.user, v),
        )


@extend_schema(tags=TAGS)
class RedoView(LabelsAPIView):
    """Redo the last undone label edit."""

    @extend_schema(
        summary="Redo the last undone edit",
        request=VersionSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            VersionSerializer,
            lambda t, v, d: protocol.do_redo(t, request.user, v),
        )


@extend_schema(tags=["review"])
class SubmitView(LabelsAPIView):
    """Send the labels for review; refused while anything is missing."""

    @extend_schema(
        summary="Submit for review",
        request=VersionSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        return self.edit(
            request,
            trajectory_id,
            VersionSerializer,
            lambda t, v, d: s.do_submit(t, request.user, v),
        )


@extend_schema(tags=["review"])
class ReviewView(LabelsAPIView):
    """Approve, reject or send back a trajectory in review, with comments on steps."""

    @extend_schema(
        summary="Decide on a trajectory in review",
        request=ReviewRequestSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id, REVIEW)
        data = check_serializer(ReviewRequestSerializer(data=request.data))
        s.do_review(
            trajectory, request.user, data["version"], data["decision"], data.get("comments", [])
        )
        return Response(labels_data(trajectory))


@extend_schema(tags=["review"])
class CommentListView(LabelsAPIView):
    """Review comments on a trajectory; reviewers and admins add them."""

    @extend_schema(
        summary="A trajectory's review comments",
        responses={200: CommentSerializer(many=True), **errors(401, 404)},
    )
    def get(self, request: Request, trajectory_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id)
        comments = ReviewComment.objects.filter(trajectory=trajectory).select_related(
            "author", "resolved_by"
        )
        return Response(CommentSerializer(comments, many=True).data)

    @extend_schema(
        summary="Comment on a step (or on the whole trajectory)",
        request=ReviewCommentRequestSerializer,
        responses={201: CommentSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id, REVIEW)
        data = check_serializer(ReviewCommentRequestSerializer(data=request.data))
        comment = s.do_comment(trajectory, request.user, data.get("step"), data["text"])
        return Response(CommentSerializer(comment).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["review"])
class CommentView(LabelsAPIView):
    """One review comment, resolved (or opened again) on its own by the trajectory's
    annotators, reviewers and admins."""

    @extend_schema(
        summary="Resolve a review comment, or open it again",
        request=CommentResolveSerializer,
        responses={200: CommentSerializer, **errors(400, 401, 403, 404, 422)},
    )
    def patch(self, request: Request, trajectory_id: int, comment_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id, RESOLVE)
        data = check_serializer(CommentResolveSerializer(data=request.data))
        comment = s.access_comment(trajectory, comment_id)
        s.do_resolve_comment(comment, request.user, data["resolved"])
        return Response(CommentSerializer(comment).data)


@extend_schema(tags=TAGS)
class HistoryView(LabelsAPIView):
    """Who changed what in a trajectory, newest first (the last 200 events)."""

    @extend_schema(
        summary="A trajectory's change history",
        responses={200: HistoryEventSerializer(many=True), **errors(401, 404)},
    )
    def get(self, request: Request, trajectory_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id)
        events = AuditEvent.objects.filter(trajectory=trajectory).select_related("actor")[:200]
        return Response(
            [
                {
                    "id": e.pk,
                    "at": e.at,
                    "actor": e.actor.get_username() if e.actor else None,
                    "kind": e.kind,
                    "object_type": e.object_type,
                    "object_id": e.object_id,
                    "before": e.before,
                    "after": e.after,
                }
                for e in events
            ]
        )


@extend_schema(tags=["review"])
class AssignmentListView(LabelsAPIView):
    """Who annotates which trajectory of a project (admins)."""

    @extend_schema(
        summary="The project's assignments",
        responses={200: AssignmentSerializer(many=True), **errors(401, 403, 404)},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = access_assignments(request.user, project_id)
        found = Assignment.objects.filter(trajectory__project=project).select_related(
            "trajectory", "annotator"
        )
        return Response(AssignmentSerializer(found, many=True).data)

    @extend_schema(
        summary="Assign trajectories to annotators",
        description="With per_trajectory 2, the second annotator of each gets a copy.",
        request=AssignRequestSerializer,
        responses={201: AssignmentSerializer(many=True), **errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_assignments(request.user, project_id)
        data = check_serializer(AssignRequestSerializer(data=request.data))
        found = {t.pk: t for t in project.trajectories.filter(pk__in=data["trajectories"])}
        missing = [pk for pk in data["trajectories"] if pk not in found]
        if missing:
            raise InvalidData(f"trajectories: {missing} are not trajectories of {project.name}")
        users = {
            u.username: u for u in get_user_model().objects.filter(username__in=data["annotators"])
        }
        unknown = [name for name in data["annotators"] if name not in users]
        if unknown:
            raise InvalidData(f"annotators: no such users {unknown}")
        annotators = [users[name] for name in data["annotators"]]
        trajectories = [found[pk] for pk in data["trajectories"]]
        if data["spread"] or data["per_trajectory"] == 2:
            made = s.do_spread_assignments(
                project, trajectories, annotators, request.user, data["per_trajectory"]
            )
        else:
            made = [s.do_assign(t, a, request.user) for t in trajectories for a in annotators]
        made = Assignment.objects.filter(pk__in=[a.pk for a in made]).select_related(
            "trajectory", "annotator"
        )
        return Response(AssignmentSerializer(made, many=True).data, status=status.HTTP_201_CREATED)


def counts_data(counts: Counts) -> dict[str, Any]:
    return {
        "trajectories": counts.trajectories,
        "boundary_f1": counts.boundary_f1,
        "kappa": counts.kappa,
        "anchor_agreement": counts.anchor_agreement,
    }


@extend_schema(tags=["review"])
class AgreementView(LabelsAPIView):
    """Agreement of double-annotated trajectories: overall, per annotator pair, per pair."""

    @extend_schema(
        summary="Inter-annotator agreement of a project",
        parameters=[
            OpenApiParameter(
                "k",
                {"type": "integer", "minimum": 0, "maximum": 20},
                description="Boundary tolerance in steps (default 1).",
            )
        ],
        responses={200: AgreementSerializer, **errors(400, 401, 404)},
    )
    def get(self, request: Request, project_id: int) -> Response:
        from trajectories.access import access_project

        project = access_project(request.user, project_id)
        try:
            k = int(request.query_params.get("k", 1))
        except ValueError:
            raise InvalidRequest("k: must be an integer") from None
        if not 0 <= k <= 20:
            raise InvalidRequest("k: must be between 0 and 20")
        result = project_agreement(project, k)
        return Response(
            {
                "k": k,
                "overall": {"annotators": [], **counts_data(result.overall)},
                "pairs": [
                    {"annotators": list(pair), **counts_data(c)}
                    for pair, c in result.by_pair.items()
                ],
                "trajectories": [
                    {
                        "trajectory": row.trajectory.pk,
                        "copy": row.copy.pk,
                        "annotators": list(row.annotators),
                        **counts_data(row.counts),
                    }
                    for row in result.rows
                ],
                "waiting": result.waiting,
            }
        )


@extend_schema(tags=["proposals"])
class ProposeView(LabelsAPIView):
    """Ask a proposer for proposed labels: one trajectory (its editors), or a project's
    selection or all its trajectories (admins). A job does it; poll the job's URL."""

    @extend_schema(
        summary="A trajectory's proposals, with their raw output and decisions",
        responses={200: ProposalSerializer(many=True), **errors(401, 404)},
    )
    def get(self, request: Request, trajectory_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id)
        found = Proposal.objects.filter(trajectory=trajectory).order_by("-created_at", "-id")
        return Response(ProposalSerializer(found, many=True).data)

    @extend_schema(
        summary="Ask for proposals on one trajectory",
        request=TrajectoryProposeRequestSerializer,
        responses={202: JobSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, trajectory_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id, EDIT)
        data = check_serializer(TrajectoryProposeRequestSerializer(data=request.data))
        job = s.do_start_proposals(
            trajectory.project,
            request.user,
            {"trajectories": [str(trajectory.uid)]},
            data["proposer"],
        )
        return job_response(job, request, status.HTTP_202_ACCEPTED)


@extend_schema(tags=["proposals"])
class ProjectProposeView(LabelsAPIView):
    @extend_schema(
        summary="Ask for proposals on a project's trajectories",
        description="``filters`` are the trajectory list's (``trajectories``: ids for a "
        "selection); none means every trajectory. Trajectories already proposed by the same "
        "prompt are skipped.",
        request=ProposeRequestSerializer,
        responses={202: JobSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = access_assignments(request.user, project_id)
        data = check_serializer(ProposeRequestSerializer(data=request.data))
        job = s.do_start_proposals(project, request.user, data["filters"], data["proposer"])
        return job_response(job, request, status.HTTP_202_ACCEPTED)


def _proposal_of(trajectory: Trajectory, proposal_id: int) -> Proposal:
    proposal = Proposal.objects.filter(trajectory=trajectory, pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"proposal {proposal_id} is not a proposal of this trajectory")
    proposal.trajectory = trajectory
    return proposal


class ProposalDecisionView(LabelsAPIView):
    """Accept proposed items as labels (a versioned, undoable edit), or reject them."""

    serializer = ProposalDecisionSerializer

    def apply(self, proposal: Proposal, user, data: dict[str, Any]) -> dict[str, Any]:
        """Decide; what the answer says besides the labels."""
        raise NotImplementedError

    def decide(self, request: Request, trajectory_id: int, proposal_id: int) -> Response:
        trajectory, _ = access_labels(request.user, trajectory_id, EDIT)
        proposal = _proposal_of(trajectory, proposal_id)
        data = check_serializer(self.serializer(data=request.data))
        told = self.apply(proposal, request.user, data)
        return Response({**labels_data(trajectory), **told})


@extend_schema(tags=["proposals"])
class ProposalAcceptView(ProposalDecisionView):
    serializer = ProposalAcceptSerializer

    def apply(self, proposal: Proposal, user, data: dict[str, Any]) -> dict[str, Any]:
        done = s.do_accept(proposal, user, data["version"], data["items"], data["edited"])
        return {"accepted": done.accepted, "skipped": [asdict(x) for x in done.skipped]}

    @extend_schema(
        summary="Accept proposed items (a label edit on the labels' version)",
        description='Named items are accepted all or none. ``"all"`` accepts every pending '
        "item that can be and lists the others under ``skipped`` with the reason (they stay "
        "pending); it is refused only when none can be.",
        request=ProposalAcceptSerializer,
        responses={200: AcceptedLabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int, proposal_id: int) -> Response:
        return self.decide(request, trajectory_id, proposal_id)


@extend_schema(tags=["proposals"])
class ProposalRejectView(ProposalDecisionView):
    def apply(self, proposal: Proposal, user, data: dict[str, Any]) -> dict[str, Any]:
        s.do_reject(proposal, user, data["items"])
        return {}

    @extend_schema(
        summary="Reject proposed items",
        request=ProposalDecisionSerializer,
        responses={200: LabelsSerializer, **EDIT_ERRORS},
    )
    def post(self, request: Request, trajectory_id: int, proposal_id: int) -> Response:
        return self.decide(request, trajectory_id, proposal_id)
