"""`stackbench serve`: the team dashboard (docs/server.md).

Server-rendered pages over the same store the CLI writes, with accounts, private-by-default results and
expiring share links. Imported only by the `serve` and `user` commands: FastAPI, uvicorn and argon2 are
never loaded by the rest of the CLI.
"""
