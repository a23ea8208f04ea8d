from django.apps import AppConfig


class TrajectoriesConfig(AppConfig):
    name = "trajectories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save

        from . import list_cache
        from .models import Task, Trajectory

        # What the lists show changed: their cached pages are read again (list_cache.py).
        for model in (Trajectory, Task):
            post_save.connect(list_cache.row_changed, sender=model, dispatch_uid=f"list-{model}")
            post_delete.connect(list_cache.row_changed, sender=model, dispatch_uid=f"list-{model}")
        user = get_user_model()
        post_save.connect(list_cache.user_changed, sender=user, dispatch_uid="list-user")
        post_delete.connect(list_cache.user_changed, sender=user, dispatch_uid="list-user")
