"""DS-COMPRESS-OFF: compression=off on VM storage. LZ4 is cheap and usually a net win (about 10 % in
METHOD.md); `on` (= lz4) is the default since OpenZFS 2.2.0, `off` before."""

from stackbench.audit.rule import Finding, Rule


def check(facts):
    for name, props in facts.datasets.items():
        value, source = props.get("compression", ("", ""))
        if value == "off" and props.get("type", ("",))[0] in ("volume", "filesystem") and "/" in name:
            yield Finding(
                "DS-COMPRESS-OFF", "info", name, f"compression=off ({source})", f"zfs set compression=lz4 {name}",
                prove="stackbench run -t /POOL/DATASET --preset blog --qd 4 --label off; zfs set compression=lz4 ...; "
                      "stackbench run ... --label lz4; stackbench compare off lz4",
            )


RULE = Rule(
    "DS-COMPRESS-OFF", "Compression off on VM storage", "info",
    "LZ4 costs little CPU and usually saves I/O; new writes only.",
    "zfs set compression=lz4 DATASET",
    "https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/Workload%20Tuning.html#lz4-compression",
    check, doc=__doc__,
)
