"""Filled in by the annotate issue."""

urlpatterns: list = []
