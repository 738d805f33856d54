"""Measuring: a run (its checks before fio writes anything in preparation.py, its rounds in runner.py),
`ab`'s and `slog`'s paired rounds, the synclat sweep's plan, the safety checks (safety.py), and what a dead
or interrupted run leaves (abandoned.py, recovery.py)."""
