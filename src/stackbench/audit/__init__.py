"""The audit: rules that read saved facts (never the live system) and report findings with fixes.

Knowledge base: docs in ../shared/docs/zfs-kvm-audit-rules.md (issue 6). Facts are raw command outputs in
a directory (`stackbench facts save DIR`), parsed by `facts.load_facts`; every rule is one module in
`rules/`, listed in `rules.REGISTRY`.
"""
