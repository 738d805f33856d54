"""The chain of layers under a target: `stackbench stack`, every run's `facts.stack`, `layers --auto`.

Discovered from sysfs, /proc/self/mountinfo and the volume managers' own commands (dmsetup, lvs, zpool,
zfs); standard library only (besides stackbench's own base, probe and audit parsers), so the lab guests,
which have no third-party package, run it as `python3 -m stackbench.stack TARGET`.
"""
