"""`python3 -m stackbench.stack TARGET`: the stack as `stackbench stack TARGET --json` prints it, for
machines without stackbench's dependencies (the lab guests)."""

from __future__ import annotations

import json
import sys

from stackbench.base.errors import StackbenchError
from stackbench.stack.discover import discover


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python3 -m stackbench.stack TARGET", file=sys.stderr)
        return 2
    try:
        stack = discover(argv[0])
    except StackbenchError as error:
        print(f"Error: {error.one_line()}", file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(stack.to_json(), indent=2) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover - run in the lab guests
    sys.exit(main(sys.argv[1:]))
