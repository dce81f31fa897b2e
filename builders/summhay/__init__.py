"""SummHay: topics, subtopics, insights, verified documents, retrieval bounds and scoring
(pure logic over records)."""
