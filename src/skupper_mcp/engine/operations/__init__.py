"""The tool operations: one module per tool (setup, up and down, teardown, status,
test_model, diagnose, logs, precheck, resolve), each a function of the site map."""
