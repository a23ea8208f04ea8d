"""Labels accepted from a proposal name it by proposer and prompt version, not by its row id.

A trajectory has one proposal per proposer and prompt version, so ``proposal:heuristic:h1``
names it as well as ``proposal:12:heuristic`` did, and means the same after an export is
imported elsewhere (where row 12 is another trajectory's proposal, or none).
"""

from django.db import migrations


def _rename(apps, backwards: bool) -> None:
    Proposal = apps.get_model("annotate", "Proposal")
    Subgoal = apps.get_model("trajectories", "Subgoal")
    rows = Proposal.objects.values_list("pk", "trajectory_id", "proposer", "prompt_version")
    for pk, trajectory_id, proposer, prompt_version in rows.iterator():
        old, new = f"proposal:{pk}:{proposer}", f"proposal:{proposer}:{prompt_version}"
        if backwards:
            old, new = new, old
        Subgoal.objects.filter(trajectory_id=trajectory_id, origin=old).update(origin=new)
        for name in ("MemoryTarget", "Anchor"):
            model = apps.get_model("trajectories", name)
            for label in model.objects.filter(trajectory_id=trajectory_id, evidence__source=old):
                label.evidence["source"] = new
                label.save(update_fields=["evidence"])


def forwards(apps, schema_editor) -> None:
    _rename(apps, backwards=False)


def backwards(apps, schema_editor) -> None:
    _rename(apps, backwards=True)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0006_lists_comment_resolution"),
        ("trajectories", "0009_graphs_job_kinds"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
