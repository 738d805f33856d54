"""The audit: rules that read saved facts (never the live system) and report findings with fixes.

Knowledge base: docs/audit.md and `stackbench audit --list-rules`. Facts are raw command outputs in
a directory (`stackbench facts save DIR`), parsed by `facts.load_facts` from the table `facts.FACT_FILES`;
every rule is one module in `rules/` with its failing and passing examples (`examples.py`), listed in
`rules.REGISTRY`, and makes its findings through its `Rule` (`rule.py`). `service.py` makes an audit from
the facts to the store: the rules run, the document, what changed since the previous audit, stored.
"""
