"""report.html in a real browser (headless Chromium, Debian's package; skipped when absent):
the summary line and the headline table are visible in the first screen, every headline
row links to its claim's section, no image is repeated and no text overflows its cells."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from dpclaims.claims import Claim, Verdict
from dpclaims.reports import render

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Measures the laid-out page, follows the first headline row's link, and writes the
# result into the DOM, which --dump-dom prints.
PROBE = """<script>
window.addEventListener('load', () => {
  const t = document.querySelector('table.headline');
  const r = t.getBoundingClientRect();
  const s = document.querySelector('p.summary').getBoundingClientRect();
  const cells = [...document.querySelectorAll('td, th')];
  const over = cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent);
  const links = [...t.querySelectorAll('tbody tr')].map(row => {
    const a = row.querySelector('a');
    return a ? a.getAttribute('href') : null;
  });
  const targets = links.map(h => h && document.getElementById(h.slice(1)) !== null);
  const first = t.querySelector('tbody tr a');
  const firstTop = first.getBoundingClientRect().top;
  first.click();
  const section = document.getElementById(first.getAttribute('href').slice(1));
  const srcs = [...document.querySelectorAll('img')].map(i => i.getAttribute('src'));
  const out = {top: r.top, bottom: r.bottom, right: r.right, width: window.innerWidth,
               height: window.innerHeight, summaryTop: s.top, summaryBottom: s.bottom,
               overflowing: over, links: links, targets: targets, firstRowTop: firstTop,
               sectionTopAfterClick: section.getBoundingClientRect().top,
               images: srcs.length, distinctImages: new Set(srcs).size,
               pageWidth: document.documentElement.scrollWidth};
  document.body.setAttribute('data-probe', JSON.stringify(out));
});
</script></body>"""


def _probe(page, script):
    """Open ``page`` with ``script`` added in headless Chromium at 1280 x 800 and return
    what the script wrote into the DOM."""
    page.write_text(page.read_text().replace("</body>", script, 1))
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                          "--window-size=1280,800", "--virtual-time-budget=3000",
                          "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"data-probe=\"([^\"]*)\"", dom)
    assert m, dom[:500]
    return json.loads(html.unescape(m.group(1)))


def _figure(path, colour):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 2))
    ax.plot([0, 1, 2], [0, 1, 0], color=colour)
    fig.savefig(path)
    plt.close(fig)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_first_screen_links_and_images(tmp_path):
    claims = [Claim(f"paper/claim-{i}-with-a-long-identifier", "P v0", f"Sec. {i}, eq. ({i})",
                    "a statement " * 20, "audit") for i in range(6)]
    _figure(tmp_path / "shared.png", "C0")
    _figure(tmp_path / "own.png", "C1")
    verdicts = []
    for i, c in enumerate(claims):
        for reading in ("as-printed", "corrected"):
            # the same figure under every reading of every claim: embedded once
            verdicts.append(Verdict(c, reading, ["holds", "refuted", "inconclusive",
                                                 "not-checkable"][i % 4],
                                    "A long sentence that explains the verdict " * 8,
                                    certificate=i % 4 == 1,
                                    figures=["shared.png"] + (["own.png"] if i == 2 else [])))
    wide = {"columns": [f"a long column heading {k}" for k in range(14)],
            "rows": [[f"value_{k}_without_spaces_or_hyphens" for k in range(14)]] * 3}
    sections = [{"title": "context", "text": "text", "figures": ["own.png"], "table": wide}]
    paths = render.write_report(tmp_path, title="browser check", meta={"seed": 0},
                                verdicts=verdicts, sections=sections,
                                run_info={"dpclaims": "0", "python": "3", "total seconds": 1})
    probe = _probe(paths["html"], PROBE)
    # the summary line and the headline table start in the first screen
    assert 0 <= probe["summaryTop"] < probe["summaryBottom"] <= probe["top"]
    assert 0 <= probe["top"] < probe["height"] and 0 <= probe["firstRowTop"] < probe["height"]
    assert probe["right"] <= probe["width"]      # the table fits the width
    assert probe["pageWidth"] <= probe["width"]  # a wide section table scrolls in its box
    assert probe["overflowing"] == []            # no cell's text overflows it
    # every headline row links to its claim's section; following the first lands on it
    assert len(probe["links"]) == 6 and all(probe["targets"]), probe["links"]
    assert abs(probe["sectionTopAfterClick"]) < 2
    # each figure embedded once: two distinct figures; a claim names its figure once
    # whatever its readings repeat, and a later mention (5 claims, 1 section) is a link
    assert probe["images"] == probe["distinctImages"] == 2
    assert paths["html"].read_text().count("shown above, under") == 6


# Where the summary and each headline row end, and the page's height, with every
# <details> closed (as the page opens).
HEIGHTS = """<script>
window.addEventListener('load', () => {
  const rows = [...document.querySelectorAll('table.headline tbody tr')].map(r => {
    const b = r.getBoundingClientRect();
    return {bottom: b.bottom, verdict: r.querySelector('td.verdict').textContent,
            sentence: r.querySelector('td.sentence').textContent};
  });
  const out = {summaryBottom: document.querySelector('p.summary').getBoundingClientRect().bottom,
               rows: rows, page: document.documentElement.scrollHeight,
               open: document.querySelectorAll('details[open]').length,
               details: document.querySelectorAll('details').length,
               width: document.documentElement.scrollWidth};
  document.body.setAttribute('data-probe', JSON.stringify(out));
});
</script></body>"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_a_reviewer_reads_every_verdict_in_two_screens(tmp_path):
    """Issue 41, item 5, on a report shaped like DP-SEP's quick audit (17 claims, 2-4
    readings each with long evidence, a tall figure per claim, extra sections with tables
    and figures): at 1280 x 800 the summary and every claim's verdict and sentence end
    within the first two screens (1600 px), and the whole page, evidence folded, is at
    most ten screens (8000 px)."""
    import matplotlib

    from dpclaims.claims.kernel import Bound, Claimed, decide, not_checkable

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    verdicts, figures = [], []
    for i in range(17):
        claim = Claim(f"paper/claim-{i}-with-a-long-identifier", "P v0",
                      f"Sec. {i}, Proposition {i} and Table {i}", "a statement " * 40, "audit",
                      kind="privacy-number")
        name = f"figure-{i}.png"
        fig, ax = plt.subplots(figsize=(8, 6))
        ax.plot(range(10), [k * i for k in range(10)])
        fig.savefig(tmp_path / name, dpi=60)
        plt.close(fig)
        figures.append(name)
        for r in range(1 + i % 4):
            source = f"exact composition of {100 + r} Gaussian releases (Balle-Wang, hidden order)"
            evidence = {"trials": list(range(300)), "note": "evidence " * 200}
            if i % 5 == 4:
                verdicts.append(not_checkable(claim, f"reading {r}", "the UCI files "
                                              "(--data-dir): the embedded default is a "
                                              "stand-in", evidence=evidence))
            else:
                verdicts.append(decide(claim, f"reading {r} of the paper's calibration",
                                       Claimed("epsilon", 1.0 + i / 10),
                                       lower=Bound(1.0 + i * 7.3 * (r + 1), source,
                                                   basis="exact"),
                                       upper=Bound(2.0 + i * 9.1 * (r + 1), source,
                                                   basis="exact"),
                                       context="A long context sentence. " * 10,
                                       evidence=evidence, figures=[name]))
    wide = {"columns": [f"column {k}" for k in range(10)],
            "rows": [[f"value {k}" for k in range(10)]] * 40}
    sections = [{"title": f"section {k}", "text": "text " * 300, "table": wide,
                 "figures": figures[:3]} for k in range(4)]
    paths = render.write_report(tmp_path, title="dpclaims audit: paper", meta={"seed": 0},
                                verdicts=verdicts, sections=sections,
                                run_info={"dpclaims": "0", "python": "3", "total seconds": 1})
    probe = _probe(paths["html"], HEIGHTS)
    assert len(probe["rows"]) == 17 and probe["open"] == 0 and probe["details"] >= 17
    assert probe["summaryBottom"] <= 2 * 800
    for row in probe["rows"]:
        assert row["verdict"] in ("holds", "refuted", "inconclusive", "not-checkable")
        assert row["sentence"].startswith("Under the paper's reading")
        assert row["bottom"] <= 2 * 800, row
    assert probe["page"] <= 10 * 800, probe["page"]
    assert probe["width"] <= 1280
