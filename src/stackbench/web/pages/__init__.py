"""The server's pages, one module of routes (an `APIRouter` named `router`) per page group, which
`web/app.py` includes in `GROUPS`:

- `home`: `/`, the stylesheet, the copy buttons' script, robots.txt
- `accounts`: logging in and out
- `runs_list`: `/runs`
- `run`: a run's page, its charts, its report and its owner's visibility form
- `compare`: two runs compared, its chart and report
- `layers`: `stackbench layers` as a page
- `slog`: the sync-latency runs and `stackbench slog`'s ranking
- `scans_audits`: stored smallblocks scans and audits, their lists and pages
- `shares`: making and revoking share links, and what a link's holder sees

What they share is below them: `render` (a page from its template, the error page, a chart image, the
login redirect), `listing` (a list's pages), `picked` (the runs checked for a layers or SLOG page),
`reports` (report downloads), `visibility` (the owner's private/team form) and `errors` (the error
pages of the exceptions). Every object a route names comes from `web/access.py` (`load`, `load_runs`);
every form that changes something depends on `sessions.csrf_checked`; the store, the settings, the
templates and the caches are the one `ServerContext` of the app (`context.context_of(request)`). The viewer
is `sessions.current(request)`, called by the routes that have one: not a FastAPI dependency, which as a
synchronous function would run in the thread pool on its own (about 70 us more a request), and a share
link's pages must not read the session at all.
"""
