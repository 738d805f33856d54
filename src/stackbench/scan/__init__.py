"""File-size histograms for sizing a ZFS special vdev (METHOD.md section 5)."""
