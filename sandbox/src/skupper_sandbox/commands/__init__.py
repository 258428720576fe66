"""Emulated commands at the cost of real ones: a per-world server and a C client per tool."""
