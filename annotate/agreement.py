"""Inter-annotator agreement for trajectories labelled twice (an original and its copy).

Only pairs whose two annotators have both submitted (each trajectory in review or decided)
are compared: a copy starts unlabelled, and half-done work measures nothing. The others are
counted as waiting.

Definitions (k is the boundary tolerance in steps):

- **Boundaries** of a segmentation are the cuts between steps: ``b`` is a boundary when a
  subgoal starts at ``b > 0`` or ends at ``b - 1 < n - 1`` (n steps). The trajectory's own
  ends are never boundaries.
- **Boundary F1**: boundaries of A and B are matched one-to-one when ``|a - b| <= k``, closest
  pairs first (ties: smaller a, then smaller b). With m matches, precision m/|A|, recall m/|B|,
  F1 = 2m / (|A| + |B|); two segmentations without boundaries agree fully (F1 = 1).
- **Matched subgoals**: a subgoal of A and one of B match when both their starts and their ends
  are within k; one-to-one, smallest total distance first.
- **Cohen's kappa** of success labels over matched subgoals that both annotators labelled
  (yes / no / uncertain): (p_o - p_e) / (1 - p_e), where p_e = Σ_c p_A(c) p_B(c); when
  p_e = 1 (both used one and the same label throughout) kappa is 1. None without pairs.
- **Anchor type agreement**: anchors as (step, type) pairs; |A ∩ B| / |A ∪ B| (Jaccard).
  None when neither has anchors.

Per pair of annotators and per project the counts are pooled over trajectories (micro
average): boundary matches and sizes are summed, all label pairs enter one kappa, and anchor
intersections and unions are summed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from trajectories.models import Anchor, Project, Subgoal, Trajectory
from trajectories.selectors import ANNOTATED

from .models import Assignment

SUCCESS_LABELS = ("yes", "no", "uncertain")

Range = tuple[int, int]


def boundaries(ranges: Iterable[Range], step_count: int) -> set[int]:
    cuts = set()
    for start, end in ranges:
        if start > 0:
            cuts.add(start)
        if end + 1 < step_count:
            cuts.add(end + 1)
    return cuts


def _greedy_match(pairs: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """One-to-one matching from (cost, a, b) candidates, cheapest first."""
    used_a, used_b, matched = set(), set(), []
    for _, a, b in sorted(pairs):
        if a not in used_a and b not in used_b:
            used_a.add(a)
            used_b.add(b)
            matched.append((a, b))
    return matched


def match_boundaries(a: set[int], b: set[int], k: int) -> int:
    candidates = [(abs(x - y), x, y) for x in a for y in b if abs(x - y) <= k]
    return len(_greedy_match(candidates))


def boundary_f1(a: set[int], b: set[int], k: int) -> float:
    if not a and not b:
        return 1.0
    return 2 * match_boundaries(a, b, k) / (len(a) + len(b))


def match_subgoals(a: Sequence[Range], b: Sequence[Range], k: int) -> list[tuple[int, int]]:
    """Index pairs (i in a, j in b) of matched subgoals."""
    candidates = [
        (abs(sa - sb) + abs(ea - eb), i, j)
        for i, (sa, ea) in enumerate(a)
        for j, (sb, eb) in enumerate(b)
        if abs(sa - sb) <= k and abs(ea - eb) <= k
    ]
    return _greedy_match(candidates)


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(x == y for x, y in pairs) / n
    first, second = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    expected = sum(first[c] * second[c] for c in set(first) | set(second)) / (n * n)
    if expected == 1:
        return 1.0
    return (observed - expected) / (1 - expected)


def anchor_agreement(a: set[tuple[int, str]], b: set[tuple[int, str]]) -> float | None:
    union = a | b
    return len(a & b) / len(union) if union else None


@dataclass
class Labels:
    """What agreement compares of one trajectory."""

    step_count: int
    subgoals: list[tuple[int, int, str]]  # start, end, success
    anchors: set[tuple[int, str]]  # step, type


@dataclass
class Counts:
    """Pooled counts over one or more trajectory pairs."""

    trajectories: int = 0
    matched_boundaries: int = 0
    boundaries_a: int = 0
    boundaries_b: int = 0
    label_pairs: list[tuple[str, str]] = field(default_factory=list)
    anchors_common: int = 0
    anchors_union: int = 0

    def add(self, a: Labels, b: Labels, k: int) -> None:
        ranges_a = [(s, e) for s, e, _ in a.subgoals]
        ranges_b = [(s, e) for s, e, _ in b.subgoals]
        cuts_a, cuts_b = boundaries(ranges_a, a.step_count), boundaries(ranges_b, b.step_count)
        self.trajectories += 1
        self.matched_boundaries += match_boundaries(cuts_a, cuts_b, k)
        self.boundaries_a += len(cuts_a)
        self.boundaries_b += len(cuts_b)
        for i, j in match_subgoals(ranges_a, ranges_b, k):
            x, y = a.subgoals[i][2], b.subgoals[j][2]
            if x in SUCCESS_LABELS and y in SUCCESS_LABELS:
                self.label_pairs.append((x, y))
        self.anchors_common += len(a.anchors & b.anchors)
        self.anchors_union += len(a.anchors | b.anchors)

    @property
    def boundary_f1(self) -> float:
        total = self.boundaries_a + self.boundaries_b
        return 1.0 if total == 0 else 2 * self.matched_boundaries / total

    @property
    def kappa(self) -> float | None:
        return cohen_kappa(self.label_pairs)

    @property
    def anchor_agreement(self) -> float | None:
        return self.anchors_common / self.anchors_union if self.anchors_union else None


@dataclass
class PairRow:
    trajectory: Trajectory
    copy: Trajectory
    annotators: tuple[str, str]
    counts: Counts


@dataclass
class ProjectAgreement:
    k: int
    rows: list[PairRow]
    by_pair: dict[tuple[str, str], Counts]
    overall: Counts
    waiting: int = 0  # pairs not compared yet: one or both annotators have not submitted


def labels_of(trajectories: Sequence[Trajectory]) -> dict[int, Labels]:
    """The compared labels of many trajectories, in two queries."""
    found = {t.pk: Labels(t.step_count, [], set()) for t in trajectories}
    for t_id, start, end, success in (
        Subgoal.objects.filter(trajectory__in=found)
        .order_by("start", "id")
        .values_list("trajectory_id", "start", "end", "success")
    ):
        found[t_id].subgoals.append((start, end, success))
    for t_id, step, kind in Anchor.objects.filter(trajectory__in=found).values_list(
        "trajectory_id", "step_index", "type"
    ):
        found[t_id].anchors.add((step, kind))
    return found


def submitted(trajectory: Trajectory) -> bool:
    """Its annotator has handed it on: in review, approved or rejected."""
    return trajectory.status in ANNOTATED


def project_agreement(project: Project, k: int = 1) -> ProjectAgreement:
    """Agreement over the pairs both of whose annotators have submitted."""
    pairs = list(
        Trajectory.objects.filter(project=project, copy_of__isnull=False)
        .select_related("copy_of__task")
        .order_by("copy_of_id", "id")
    )
    copies = [c for c in pairs if submitted(c) and submitted(c.copy_of)]
    originals = {c.copy_of_id: c.copy_of for c in copies}
    everyone = [*originals.values(), *copies]
    labels = labels_of(everyone)
    names: dict[int, list[str]] = defaultdict(list)
    for t_id, username in (
        Assignment.objects.filter(trajectory__in=everyone)
        .order_by("id")
        .values_list("trajectory_id", "annotator__username")
    ):
        names[t_id].append(username)
    rows, by_pair, overall = [], defaultdict(Counts), Counts()
    for copy in copies:
        original = originals[copy.copy_of_id]
        first = ", ".join(names[original.pk]) or "unassigned"
        second = ", ".join(names[copy.pk]) or "unassigned"
        pair = tuple(sorted((first, second)))
        counts = Counts()
        counts.add(labels[original.pk], labels[copy.pk], k)
        by_pair[pair].add(labels[original.pk], labels[copy.pk], k)
        overall.add(labels[original.pk], labels[copy.pk], k)
        rows.append(PairRow(original, copy, (first, second), counts))
    return ProjectAgreement(
        k, rows, dict(sorted(by_pair.items())), overall, waiting=len(pairs) - len(copies)
    )
