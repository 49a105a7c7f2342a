"""report.html in a real browser (headless Chromium, Debian's package; skipped when absent):
the headline table is visible in the first screen and no text overflows its cells."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from dpclaims.claims import Claim, Verdict
from dpclaims.reports import render

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Measures the laid-out page and writes the result into the DOM, which --dump-dom prints.
PROBE = """<script>
window.addEventListener('load', () => {
  const t = document.querySelector('table.headline');
  const r = t.getBoundingClientRect();
  const cells = [...t.querySelectorAll('td, th')];
  const over = cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent);
  const out = {top: r.top, bottom: r.bottom, right: r.right, width: window.innerWidth,
               height: window.innerHeight, overflowing: over};
  document.body.setAttribute('data-probe', JSON.stringify(out));
});
</script></body>"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_headline_table_is_visible_first_and_nothing_overflows(tmp_path):
    claims = [Claim(f"paper/claim-{i}-with-a-long-identifier", "P v0", f"Sec. {i}, eq. ({i})",
                    "a statement", "audit") for i in range(6)]
    verdicts = []
    for i, c in enumerate(claims):
        verdicts.append(Verdict(c, "as-printed", ["holds", "refuted", "inconclusive",
                                                  "not-checkable"][i % 4],
                                "A long sentence that explains the verdict " * 8,
                                certificate=i % 4 == 1))
    paths = render.write_report(tmp_path, title="browser check", meta={"seed": 0},
                                verdicts=verdicts, sections=[])
    page = tmp_path / "probe.html"
    page.write_text(paths["html"].read_text().replace("</body>", PROBE, 1))
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                          "--window-size=1280,800", "--virtual-time-budget=3000",
                          "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"data-probe=\"([^\"]*)\"", dom)
    assert m, dom[:500]
    probe = json.loads(m.group(1).replace("&quot;", '"'))
    assert 0 <= probe["top"] < probe["height"]  # the table starts in the first screen
    assert probe["right"] <= probe["width"]      # and fits its width
    assert probe["overflowing"] == []            # no cell's text overflows it
