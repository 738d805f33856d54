"""File-size histograms for sizing a ZFS special vdev (docs/method.md section 5)."""
