"""How each kind of setting is read and changed (knob.Access): kernel files (sysfs, /proc/sys), mount options,
ZFS properties, a Proxmox VM's disk, a user's argv lists, and the throwaway ZFS child a session measures on."""
