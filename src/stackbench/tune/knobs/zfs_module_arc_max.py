"""zfs.module.zfs_arc_max: the ARC's largest size in bytes (0: the module's default). Candidates are a quarter,
half and three quarters of RAM, raced. Tradeoff (`--allow tradeoff`): memory the ARC takes is memory programs and
VMs do not get. Answers ARC-SMALL, ARC-OVERCOMMIT and ARC-MAX-LE-MIN. Host-wide (lab guest only in tests).
"""

from stackbench.tune import subjects
from stackbench.tune.knob import Cost, Knob, Persistence, Safety, Scope, Undo, Values
from stackbench.tune.knobs._zfs_module import access, example, persist, settings_of, shares_of_ram

DOC = __doc__
NAME = "zfs_arc_max"

KNOB = Knob(
    id="zfs.module.zfs_arc_max", title="ARC size limit", scope=Scope.POOL_MODULE, access=access(NAME),
    undo=Undo.SET_ORIGINAL, values=Values(("25%", "50%", "75%"), ordinal=True, unit="of RAM",
                                          derive=shares_of_ram((0.25, 0.5, 0.75)), special={"0": "module default"}),
    safety=Safety.TRADEOFF, cost=Cost.INSTANT, persistence=Persistence.VOLATILE, affects=("read",),
    subjects=subjects.zfs_module, source="https://openzfs.github.io/openzfs-docs/man/master/4/zfs.4.html",
    doc=DOC, audit_rules=("ARC-SMALL", "ARC-OVERCOMMIT", "ARC-MAX-LE-MIN"), persist=persist(NAME),
    settings=settings_of(NAME), examples=example(NAME, "0", "4294967296"),
)
