"""The workflow stages, one small ADK agent each: router, rewrite, retrieve, grade, web, answer."""
