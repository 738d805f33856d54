"""Fleet runs: one plan on many hosts at once, through fio's own client/server mode tunnelled over OpenSSH.

`hosts` reads and checks the host list, `ssh` builds every ssh command, `agent` is the standard-library
program the remote python3 runs (preflight facts, the fio server's supervisor, cleanup), `preflight`
checks every host before anything starts anywhere, `servers` starts and stops the fio servers and their
SSH forwards, and `run` measures the plan cell by cell on all hosts with one `fio --client` call each,
storing per-host cells and the total computed from them. docs/fleet.md is the user's side of it.
"""
