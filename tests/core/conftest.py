from tests.annotate.llm_server import llm  # noqa: F401 (the fixture)
