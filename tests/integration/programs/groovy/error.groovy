throw new RuntimeException("boom")
