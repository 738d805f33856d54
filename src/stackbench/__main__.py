import sys

try:
    from stackbench.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python is still loading stackbench: nothing has been written
    sys.stderr.write("Error: interrupted while starting. Nothing was written.\n")
    sys.exit(130)

main()
