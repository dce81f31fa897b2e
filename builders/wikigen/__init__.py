"""WikiGenBench: event selection and entries (pure logic over records)."""
