"""The legal-text vocabulary shared by the knowledge base, retrieval, the router, the grader and the citation check:
law names as people write them (`laws`), article references (`refs`), Chinese numerals (`numerals`)."""
