"""How proposals fared, per proposer and prompt version: items accepted unchanged, edited,
rejected or waiting, failed proposals, and the boundary F1 between the proposed subgoals and
the subgoals people finally kept."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from trajectories.models import Project, Subgoal

from .models import Proposal, ProposalStatus
from .proposers.scoring import Score, boundary_f1


@dataclass
class ProposerFigures:
    proposer: str
    prompt_version: str
    proposals: int = 0
    failed: int = 0
    items: dict[str, int] = field(
        default_factory=lambda: {"accepted": 0, "edited": 0, "rejected": 0, "pending": 0}
    )
    boundaries: Score = field(default_factory=lambda: Score(0, 0, 0))
    decided_trajectories: int = 0

    @property
    def decided(self) -> int:
        return self.items["accepted"] + self.items["edited"] + self.items["rejected"]

    def share(self, decision: str) -> float:
        return self.items[decision] / self.decided if self.decided else 0.0

    @property
    def shares(self) -> dict[str, float]:
        return {d: self.share(d) for d in ("accepted", "edited", "rejected")}


def proposal_figures(project: Project) -> list[ProposerFigures]:
    proposals = Proposal.objects.filter(trajectory__project=project).order_by("proposer", "id")
    kept: dict[int, list[int]] = defaultdict(list)
    for trajectory_id, start in Subgoal.objects.filter(trajectory__project=project).values_list(
        "trajectory_id", "start"
    ):
        kept[trajectory_id].append(start)
    figures: dict[tuple[str, str], ProposerFigures] = {}
    for p in proposals:
        f = figures.setdefault(
            (p.proposer, p.prompt_version), ProposerFigures(p.proposer, p.prompt_version)
        )
        f.proposals += 1
        if p.status == ProposalStatus.FAILED:
            f.failed += 1
            continue
        for part in ("subgoals", "memory_targets", "anchors"):
            decided = p.decisions.get(part, {})
            for i in range(len(p.payload.get(part, []))):
                f.items[decided.get(str(i), "pending")] += 1
        if p.decided_at is not None:
            f.decided_trajectories += 1
            f.boundaries += boundary_f1(
                [g["start"] for g in p.payload.get("subgoals", [])], kept[p.trajectory_id]
            )
    return sorted(figures.values(), key=lambda f: (f.proposer, f.prompt_version))
