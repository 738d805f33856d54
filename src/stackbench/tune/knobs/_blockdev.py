"""What the block-queue knobs share: how a kept value is made to survive a reboot (a udev rule)."""

from __future__ import annotations

from typing import Callable

from stackbench.tune.knob import Subject


def udev_rule(attribute: str) -> Callable[[Subject, str], str]:
    """`queue/read_ahead_kb` -> the udev rule line that sets it when the device appears."""
    return lambda subject, value: (f'/etc/udev/rules.d/60-stackbench-tune.rules: ACTION=="add|change", '
                                   f'KERNEL=="{subject.name}", ATTR{{{attribute}}}="{value}"')
