"""Filled in by the devices issue."""

urlpatterns: list = []
