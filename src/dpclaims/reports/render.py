"""Write an audit report: ``results.json``, ``report.md``, ``report.html`` and PNG figures.

Figures are saved beside the report as PNG files and embedded in the HTML (base64,
re-encoded with 256 colours: :func:`compressed_png`), each once, so ``report.html`` is
self-contained.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

from dpclaims.claims import HEADLINE_RULE, VERDICTS, ReadingKind, Verdict, claims_summary
from dpclaims.claims.headline import LEGEND, claim_sentence
from dpclaims.claims.core import to_jsonable  # noqa: F401  (also imported from here)

# Version of results.json's layout (src/dpclaims/reports/results.schema.json).
SCHEMA_VERSION = "3.0"  # 2.1: claims[].kind; 3.0: summary, claims[].key, each reading once
SCHEMA_PATH = Path(__file__).with_name("results.schema.json")

_BADGE = {"holds": "#1b7f3b", "refuted": "#b3261e", "inconclusive": "#8a6d00",
          "not-checkable": "#555555"}


def write_report(out_dir, *, title: str, meta: dict, verdicts: list[Verdict],
                 sections: list[dict], run_info: dict | None = None,
                 captions: dict | None = None, seed: int | None = None) -> dict:
    """Write the report files into ``out_dir`` and return their paths.

    ``results.json`` (layout: ``results.schema.json``, ``schema_version``; read it back
    with :func:`dpclaims.reports.results.load_results`) holds only what the seed
    determines (the same seed gives the same file): a ``summary`` (claims per headline
    verdict) and a ``claims`` list, one record per claim with its headline verdict
    (:func:`dpclaims.claims.claims_summary`) and its readings, each reading once.
    ``run_info`` (command line, timings, versions) goes to ``run_info.json`` and to the
    Markdown / HTML reports.

    The reports are claim-centric: a summary line (claims per verdict, seed, budget,
    versions, run time), the headline table (each row links to its claim's section),
    then one section per claim: its quote once, its headline, a table of its readings
    with the numbers each rests on, each figure once (a figure shown earlier is
    linked, not repeated), the sentences and evidence folded.

    Parameters
    ----------
    out_dir : path
        Created if missing. Figures named in verdicts/sections must already be in it.
    title : str
    meta : dict
        Seed, budget, data provenance: everything the seed determines.
    run_info : dict, optional
        Command line, timings, versions: what varies between identical runs.
    verdicts : list of Verdict
    sections : list of dict
        Extra report sections: {"title", "text" (markdown-ish paragraphs),
        "table" (optional: {"columns": [...], "rows": [[...]]}), "figures" [...]}.
    captions : dict, optional
        Shell-style pattern of a figure's file name -> its caption (the papers'
        ``Paper.captions``), shown under each figure.
    seed : int, optional
        The run's root seed, named in the summary line (:func:`summary_line`).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    claims = to_jsonable(claims_summary(verdicts))
    summary = summarise(claims)
    results = {
        "schema_version": SCHEMA_VERSION,
        "title": title,
        "meta": meta,
        "summary": summary,
        "headline_rule": HEADLINE_RULE,
        "claims": claims,
        "sections": sections,
    }
    json_path = out / "results.json"
    json_path.write_text(json.dumps(to_jsonable(results), indent=1, sort_keys=False))
    info_path = out / "run_info.json"
    info_path.write_text(json.dumps(to_jsonable(run_info or {}), indent=2))
    line = summary_line(summary, verdicts, run_info or {}, seed)
    md_path = out / "report.md"
    captions = dict(captions or {})
    shown = {**meta, **(run_info or {})}
    md_path.write_text(_markdown(title, line, shown, claims, sections, captions))
    html_path = out / "report.html"
    html_path.write_text(_html(title, line, shown, claims, sections, out, captions))
    return {"json": json_path, "markdown": md_path, "html": html_path, "run info": info_path}


def summarise(claims: list[dict]) -> dict:
    """``{"claims": n, "holds": k, "refuted": k, "inconclusive": k, "not-checkable": k}``:
    the number of claims per headline verdict (results.json ``summary``)."""
    counts = {v: 0 for v in VERDICTS}
    for c in claims:
        counts[c["verdict"]] += 1
    return {"claims": len(claims), **counts}


def summary_line(summary: dict, verdicts: list[Verdict], run_info: dict,
                 seed: int | None = None) -> str:
    """One line a reviewer reads first: "17 claims: 5 refuted, 2 holds, 8 inconclusive,
    2 not-checkable. Seed 0 (checks use seeds derived from it), budget quick; dpclaims
    0.1.0, Python 3.11.7; 225 s." (the parts a run does not have are left out).

    ``seed``: the run's root seed. Without it, the verdicts' seed when they all have
    one; several are summed up as "seeds of each check", never listed (each reading
    names its own)."""
    n = summary["claims"]
    counts = ", ".join(f"{summary[v]} {v}" for v in
                       ("refuted", "holds", "inconclusive", "not-checkable"))
    seeds = sorted({s for s in (v.to_dict()["seed"] for v in verdicts) if s is not None})
    budgets = sorted({v.budget for v in verdicts if v.budget is not None})
    said = (f"seed {seed}" + (" (checks use seeds derived from it)" if seeds != [seed] else "")
            if seed is not None else f"seed {seeds[0]}" if len(seeds) == 1
            else "the seeds of each check" if seeds else "")
    what = ", ".join(x for x in (said, f"budget {', '.join(budgets)}" if budgets else "") if x)
    versions = ", ".join(f"{label} {run_info[k]}" for k, label in
                         (("dpclaims", "dpclaims"), ("python", "Python")) if k in run_info)
    took = f"{run_info['total seconds']:.0f} s" if "total seconds" in run_info else ""
    run = "; ".join(x for x in (what, versions, took) if x)
    text = f"{n} claim{'s' if n != 1 else ''}: {counts}."
    return text + (f" {run[0].upper()}{run[1:]}." if run else "")


def claim_anchor(claim_id: str) -> str:
    """The HTML id of a claim's section: "claim-" and the id with every character that
    is not a letter, digit, "-" or "_" replaced by "-"."""
    return _anchor("claim", claim_id)


def _anchor(prefix: str, name: str) -> str:
    return f"{prefix}-" + re.sub(r"[^A-Za-z0-9_-]", "-", name)


#: Whose reading a record is, in the report's words (``reading_kind``).
_WHOSE = {ReadingKind.TEXT.value: "the paper's", ReadingKind.CORRECTION.value: "our correction",
          ReadingKind.STRONGER_THREAT_MODEL.value: "stronger threat model"}

#: The longest evidence shown in a report per reading (characters of JSON); the whole
#: evidence is always in results.json.
EVIDENCE_SHOWN = 6000


def _evidence_text(evidence: dict) -> str:
    text = json.dumps(evidence, indent=1)
    if len(text) <= EVIDENCE_SHOWN:
        return text
    return (text[:EVIDENCE_SHOWN] + f"\n... ({len(text) - EVIDENCE_SHOWN} more characters: "
            "the whole evidence is in results.json)")


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _md_table(columns, rows) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def caption(name: str, captions: dict) -> str | None:
    """The caption of figure ``name`` (a path relative to the report folder): the first
    pattern of ``captions`` it matches (:func:`fnmatch.fnmatch`), or None."""
    import fnmatch

    for pattern, text in captions.items():
        if fnmatch.fnmatch(name, pattern):
            return text
    return None


def _data_line(claim: dict) -> str:
    """What the claim's checks ran on, or that they did not say."""
    return "; ".join(claim["data"]) if claim["data"] else "not stated by its check"


def _claim_figures(claim: dict) -> list[str]:
    """A claim's figures in order of first appearance, each once."""
    return list(dict.fromkeys(f for r in claim["readings"] for f in r["figures"]))


def _markdown(title, line, meta, claims, sections, captions) -> str:
    parts = [f"# {title}", "", f"**{line}**", "", "## Claims", "",
             _md_table(["verdict", "claim", "what was claimed, what was found"],
                       [[f"**{c['verdict']}**", f"[`{c['id']}`](#{claim_anchor(c['id'])}) "
                         f"({c['location']})", _md_cell(claim_sentence(c))] for c in claims]),
             "", f"{LEGEND} Headline rule: {HEADLINE_RULE}", ""]
    shown: dict[str, str] = {}
    for c in claims:
        parts += [f'<a id="{claim_anchor(c["id"])}"></a>', "",
                  f"### `{c['id']}`: **{c['verdict']}**", "", claim_sentence(c), "",
                  f"**Data**: {_data_line(c)}", "",
                  f"*{c['paper']}, {c['location']}.* Check: {c['check']}.", "",
                  "> " + c["statement"].replace("\n", "\n> "), "",
                  c["headline"], ""]
        parts += [_md_table(["reading", "whose", "verdict", "numbers", "certificate"],
                            [[r["reading"], _WHOSE[r["reading_kind"]], f"**{r['verdict']}**",
                              r["key"], "yes" if r["certificate"] else "no"]
                             for r in c["readings"]]), ""]
        for f in _claim_figures(c):
            parts += [_md_figure(f, captions) if f not in shown else
                      f"Figure `{f}`: shown above, under `{shown[f]}`.", ""]
            shown.setdefault(f, c["id"])
        parts += ["<details><summary>sentences and evidence of the "
                  f"{len(c['readings'])} reading(s)</summary>", ""]
        for r in c["readings"]:
            parts += [f"**{r['reading']}**: {r['verdict']}. {r['sentence']} {_seed_budget(r)}",
                      "", "```json", _evidence_text(r["evidence"]), "```", ""]
        parts += ["</details>", ""]
    parts += ["## Run", ""] + _md_meta(meta)
    for s in sections:
        parts += [f"## {s['title']}", "", s.get("text", ""), ""]
        if s.get("table"):
            parts += [_md_table(s["table"]["columns"], s["table"]["rows"]), ""]
        for f in s.get("figures") or []:
            parts += [_md_figure(f, captions) if f not in shown else
                      f"Figure `{f}`: shown above, under `{shown[f]}`.", ""]
            shown.setdefault(f, s["title"])
        parts.append("")
    return "\n".join(parts) + "\n"


def _md_cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell (a "|" would end the cell)."""
    return " ".join(text.split()).replace("|", "\\|")


def _seed_budget(r: dict) -> str:
    """"Seed 3, budget smoke." without the parts a reading record does not have."""
    bits = [f"seed {r['seed']}" if r["seed"] is not None else "",
            f"budget {r['budget']}" if r["budget"] is not None else ""]
    text = ", ".join(b for b in bits if b)
    return (text[0].upper() + text[1:] + ".") if text else ""


def _flat(value) -> str:
    """A scalar as text; a dict or list as compact 'key value' pairs (never a Python repr)."""
    if isinstance(value, dict):
        return "; ".join(f"{k} {_flat(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_flat(v) for v in value)
    return _fmt(value)


def _md_meta(meta: dict) -> list[str]:
    """The run's settings: scalars as bullets, each dict (e.g. a budget) as a small table."""
    lines = [f"- **{k}**: {_flat(v)}" for k, v in meta.items() if not isinstance(v, dict)]
    for k, v in meta.items():
        if isinstance(v, dict):
            lines += ["", f"**{k}**", "", _md_table(["", ""], [[kk, _flat(vv)]
                                                           for kk, vv in v.items()])]
    return lines + [""]


def _html_meta(meta: dict) -> str:
    esc = html.escape
    out = ["<ul>"]
    out += [f"<li><b>{esc(str(k))}</b>: {esc(_flat(v))}</li>" for k, v in meta.items()
            if not isinstance(v, dict)]
    out.append("</ul>")
    for k, v in meta.items():
        if isinstance(v, dict):
            out.append(f"<p><b>{esc(str(k))}</b></p>"
                       + _html_table(["", ""], [[kk, _flat(vv)] for kk, vv in v.items()]))
    return "".join(out)


def _img(out: Path, name: str, captions: dict) -> str:
    path = out / name
    if not path.is_file():
        return f"<p><em>figure {html.escape(name)} missing</em></p>"
    kind = "svg+xml" if path.suffix.lower() == ".svg" else "png"
    raw = path.read_bytes()
    data = base64.b64encode(raw if kind != "png" else compressed_png(raw)).decode()
    text = caption(name, captions)
    cap = f"{html.escape(text)} ({html.escape(name)})" if text else html.escape(name)
    return (f'<figure id="{_figure_anchor(name)}"><img alt="{html.escape(text or name)}" '
            f'src="data:image/{kind};base64,{data}" style="max-width:100%">'
            f"<figcaption>{cap}</figcaption></figure>")


def compressed_png(raw: bytes) -> bytes:
    """A PNG re-encoded for embedding: 256 colours (median cut) and zlib's best
    compression; about a third of matplotlib's RGBA PNG for line plots. The figure
    files beside the report keep every colour. Returns ``raw`` unchanged when it is not
    smaller."""
    import io

    from PIL import Image  # matplotlib's dependency

    with Image.open(io.BytesIO(raw)) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    buf = io.BytesIO()
    small.save(buf, "PNG", optimize=True)
    return buf.getvalue() if buf.tell() < len(raw) else raw


def _figure_anchor(name: str) -> str:
    return _anchor("figure", name)


def _html_figures(names, out: Path, captions: dict, shown: dict, where: str) -> list[str]:
    """Each figure embedded the first time it is named; later, a link to it."""
    parts = []
    for f in names:
        if f in shown:
            parts.append(f"<p class='seen'>Figure <a href='#{_figure_anchor(f)}'>"
                         f"{html.escape(f)}</a>: shown above, under "
                         f"{html.escape(shown[f])}.</p>")
        else:
            shown[f] = where
            parts.append(_img(out, f, captions))
    return parts


def _md_figure(name: str, captions: dict) -> str:
    """The image and its caption (:func:`caption`)."""
    text = caption(name, captions)
    return f"![{text or name}]({name})" + (f"\n\n*{text}* (`{name}`)" if text else "")


def _html_table(columns, rows) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    # a wide table scrolls inside its own box; the page never scrolls sideways
    return (f"<div class='wide'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            "</table></div>")


def _badge(verdict: str) -> str:
    return (f"<b class='v' style='color:{_BADGE[verdict]}'>{html.escape(verdict)}</b>")


def _html(title, line, meta, claims, sections, out: Path, captions) -> str:
    """The HTML report, laid out to be read in a minute: the summary line and a compact
    table of every claim (verdict, id and where, its plain sentence) first; then one short
    section per claim (its sentence and data shown, the rest folded: quote, check,
    readings, figures, evidence); then the run and the paper's extra sections, folded."""
    esc = html.escape
    heads = "".join(
        f"<tr><td class='verdict'>{_badge(c['verdict'])}</td>"
        f"<td class='id'><a href='#{claim_anchor(c['id'])}'><code>{esc(c['id'])}</code></a>"
        f"<br><small>{esc(c['location'])}</small></td>"
        f"<td class='sentence'>{esc(claim_sentence(c))}</td></tr>" for c in claims)
    body = [f"<h1>{esc(title)}</h1><p class='summary'><b>{esc(line)}</b></p>",
            "<table class='headline' id='claims'><thead><tr><th>verdict</th><th>claim</th>"
            f"<th>what was claimed, what was found</th></tr></thead><tbody>{heads}</tbody>"
            "</table>",
            f"<p class='rule'><small>{esc(LEGEND)} Headline rule: {esc(HEADLINE_RULE)}"
            "</small></p>"]
    toc = [("run", "Run")] + [(f"section-{i}", sec["title"]) for i, sec in enumerate(sections)]
    body.append("<nav><b>Also</b>: " + " · ".join(
        f"<a href='#{a}'>{esc(t)}</a>" for a, t in toc) + "</nav>")
    shown: dict[str, str] = {}
    for c in claims:
        figures = _html_figures(_claim_figures(c), out, captions, shown, c["id"])
        body += [f"<section id='{claim_anchor(c['id'])}'>",
                 f"<h3><code>{esc(c['id'])}</code>: {_badge(c['verdict'])}</h3>",
                 f"<p>{esc(claim_sentence(c))}</p>",
                 f"<p class='data'><b>Data</b>: {esc(_data_line(c))}</p>",
                 f"<details><summary>the claim, its {len(c['readings'])} reading(s)"
                 + (f", {len(figures)} figure(s)" if figures else "")
                 + " and the evidence</summary>",
                 f"<p><i>{esc(c['paper'])}, {esc(c['location'])}.</i> "
                 f"Check: {esc(c['check'])}.</p>",
                 f"<blockquote>{esc(c['statement'])}</blockquote>",
                 f"<p>{esc(c['headline'])}</p>",
                 _html_readings(c["readings"])]
        body += figures
        for r in c["readings"]:
            body += [f"<p><b>{esc(r['reading'])}</b>: {_badge(r['verdict'])}. "
                     f"{esc(r['sentence'])} {esc(_seed_budget(r))}</p>",
                     f"<pre>{esc(_evidence_text(r['evidence']))}</pre>"]
        body += ["</details>", "<p><small><a href='#claims'>back to the claims</a></small>"
                 "</p></section>"]
    body += ["<details class='run' id='run'><summary><b>Run</b>: settings, versions, timings"
             "</summary>", _html_meta(meta), "</details>"]
    for i, s in enumerate(sections):
        inner = [f"<p>{esc(p)}</p>" for p in s.get("text", "").split("\n\n") if p]
        if s.get("table"):
            inner.append(_html_table(s["table"]["columns"], s["table"]["rows"]))
        inner += _html_figures(s.get("figures") or [], out, captions, shown, s["title"])
        body += [f"<details class='section' id='section-{i}'><summary><b>{esc(s['title'])}"
                 "</b></summary>", *inner, "</details>"]
    style = ("body{font-family:sans-serif;max-width:1200px;margin:1em auto;line-height:1.35;"
             "padding:0 1em}h1{font-size:1.4em;margin:.3em 0}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
             "table.headline{width:100%;font-size:.9em}"
             "table.headline td,table.readings td{overflow-wrap:anywhere;vertical-align:top}"
             "table.headline td.verdict,td.verdict{white-space:nowrap;overflow-wrap:normal}"
             "table.headline td.id{width:16em}"
             "div.wide{overflow-x:auto;max-width:100%}p.summary{font-size:1.05em;margin:.3em 0}"
             "p.rule{margin:.3em 0;color:#444}"
             "section{border-top:1px solid #ddd;margin-top:.8em}section h3{margin:.4em 0}"
             "section p{margin:.3em 0}details{margin:.3em 0}summary{cursor:pointer}"
             "blockquote{border-left:4px solid #ccc;margin-left:0;padding-left:1em;color:#333}"
             "pre{background:#f6f6f6;padding:1em;overflow:auto;max-height:30em}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")


def _html_readings(readings: list[dict]) -> str:
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(r['reading'])}</td><td>{esc(_WHOSE[r['reading_kind']])}</td>"
        f"<td class='verdict'>{_badge(r['verdict'])}</td><td>{esc(r['key'])}</td>"
        f"<td>{'yes' if r['certificate'] else 'no'}</td></tr>" for r in readings)
    return ("<table class='readings'><thead><tr><th>reading</th><th>whose</th>"
            "<th>verdict</th><th>numbers</th><th>certificate</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")
