"""Analysis: pure functions over stored data (statistics, comparisons, layer gaps, goals)."""
