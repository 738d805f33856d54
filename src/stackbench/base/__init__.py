"""The ground floor: errors, units, the user-text policy, credentials' masking, child processes, and the one
way a user's file is read and an output file written. Standard library only, importing nothing of ours
but each other, so every part may use it (and fleet/ssh.py ships some of it to the hosts' agents)."""
