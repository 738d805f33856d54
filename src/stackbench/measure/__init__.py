"""Measuring: a run (runner.py), `ab`'s and `slog`'s paired rounds, the synclat sweep's plan, the safety
checks before fio writes anything, and what a dead or interrupted run leaves (abandoned.py, recovery.py)."""
