"""The stack chart (report/charts/stack.py) on the web: a run page and a layers page show it, as an image
served through the page's own authorization, for each run whose cells recorded what the layers under its
target did, and a run that recorded nothing has no such chart (no error, no empty image)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from report.test_layers_activity import three_layers
from web.site import SHARED, chart_images

STACK_ALT = "Bars of IOPS per layer, from fio down to the disks"


def test_a_layered_run_page_serves_the_stack_chart_and_a_run_without_layers_has_none(fresh_site) -> None:  # noqa: ANN001
    from stored_runs import store_run

    runs, names = three_layers()
    host, vm, luks = runs
    with fresh_site(SHARED) as site:
        for one in runs:
            store_run(site.store, one)
        site.accounts.claim(site.ids["alice"], [one.id for one in runs])
        alice = site.login("alice")
        charts = chart_images(alice.get(f"/runs/{vm.id}").text)
        [(src, alt)] = [(src, alt) for src, alt in charts if alt.startswith(STACK_ALT)]
        image = alice.get(src)
        assert image.status_code == 200 and image.headers["content-type"].startswith("image/svg+xml")
        words = [text.strip() for text in ET.fromstring(image.content).itertext()]
        assert "└ md0 (md)" in words and "fio" in words
        assert site.client().get(src).status_code == 404  # not alice: the page's own check
        plain = chart_images(alice.get(f"/runs/{luks.id}").text)
        assert plain and not [alt for _, alt in plain if STACK_ALT in alt]
        page = alice.get("/layers", params={"runs": ",".join(r.id for r in runs), "names": ",".join(names)}).text
        shown = [alt for _, alt in chart_images(page)]
        for src, _ in chart_images(page):
            assert alice.get(src).status_code == 200
        in_mb_s = alice.get("/layers", params={"runs": ",".join(r.id for r in runs), "metric": "bw"}).text
        by_bytes = [alt for _, alt in chart_images(in_mb_s) if alt.startswith("Bars of MB/s per layer")]
        wrong = alice.get("/layers/chart.svg", params={"runs": ",".join(r.id for r in runs), "metric": "x"})
    # the layers chart, then a stack chart for each run that recorded its layers (host and vm, not luks)
    assert len(shown) == 3 and not shown[0].startswith(STACK_ALT)
    assert [re.search(r"run (\S+)", alt).group(1) for alt in shown[1:]] == [host.label, vm.label]
    assert len(by_bytes) == 2  # the page's metric bw is the stack chart's MB/s
    assert wrong.status_code == 404  # a metric layers does not know draws nothing, stack chart included
