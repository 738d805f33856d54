"""The model: what a plan, a run, a cell, a measured value, a warning and a goal are, and the declared
knowledge every part judges by (the unsafe settings, the order of a paired experiment's arms). Data and
tables only, on the base alone."""
