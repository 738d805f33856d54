"""`stackbench tune`'s knob catalogue (docs/tune.md): what a knob is and how each kind of setting is read and
changed. The session that changes them (its journal, rollback and measured rounds) is measure/tune_*.py.

What lives where:

- `knob.py` what a knob is (a declared record: views, apply, a declared undo strategy, values, safety, cost,
  persistence, audit rules, examples); `access/` how a kind of setting is read and changed (kernel files,
  mount options, ZFS properties, Proxmox disks); `knobs/` the catalogue, one module per knob, and the
  forbidden list;
- `user_knobs.py` a user's knobs, declared in a TOML file (`--knobs`), made into the same record;
- `actions.py` runs a change (an argv without a shell, or a value written to a kernel file);
  `subjects.py` what a knob acts on for a target (its disks, its mount, its dataset).
"""
