from django.apps import AppConfig


class FrontendConfig(AppConfig):
    name = "frontend"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from frontend import checks  # noqa: F401  (registers them)
