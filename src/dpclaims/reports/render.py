"""Write an audit report: ``results.json``, ``report.md``, ``report.html`` and PNG figures.

Figures are saved beside the report as PNG files and embedded in the HTML (base64),
so ``report.html`` is self-contained.
"""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path

import numpy as np

from dpclaims.claims import HEADLINE_RULE, Verdict, claims_summary

# Version of results.json's layout (src/dpclaims/reports/results.schema.json).
SCHEMA_VERSION = "2.1"  # 2.1: claims[].kind
SCHEMA_PATH = Path(__file__).with_name("results.schema.json")

_BADGE = {"holds": "#1b7f3b", "refuted": "#b3261e", "inconclusive": "#8a6d00",
          "not-checkable": "#555555"}


def to_jsonable(obj):
    """Recursively turn numpy values, NaN/inf and dataclasses into JSON-able values."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    if isinstance(obj, float):
        if math.isnan(obj):
            return "nan"
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return obj


def write_report(out_dir, *, title: str, meta: dict, verdicts: list[Verdict],
                 sections: list[dict], run_info: dict | None = None,
                 captions: dict | None = None) -> dict:
    """Write the report files into ``out_dir`` and return their paths.

    ``results.json`` (layout: ``results.schema.json``, ``schema_version``) holds only
    what the seed determines (the same seed gives the same file): a ``claims`` list
    with one headline verdict per claim (:func:`dpclaims.claims.claims_summary`)
    and its per-reading records, and the flat ``verdicts`` list; ``run_info``
    (command line, timings, versions) goes to ``run_info.json``
    and to the Markdown / HTML reports.

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
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    claims = claims_summary(verdicts)
    results = {
        "schema_version": SCHEMA_VERSION,
        "title": title,
        "meta": meta,
        "headline_rule": HEADLINE_RULE,
        "claims": claims,
        "verdicts": [v.to_dict() for v in verdicts],
        "sections": sections,
    }
    json_path = out / "results.json"
    json_path.write_text(json.dumps(to_jsonable(results), indent=2, sort_keys=False))
    info_path = out / "run_info.json"
    info_path.write_text(json.dumps(to_jsonable(run_info or {}), indent=2))
    shown = {**meta, **(run_info or {})}
    md_path = out / "report.md"
    captions = dict(captions or {})
    md_path.write_text(_markdown(title, shown, claims, verdicts, sections, captions))
    html_path = out / "report.html"
    html_path.write_text(_html(title, shown, claims, verdicts, sections, out, captions))
    return {"json": json_path, "markdown": md_path, "html": html_path, "run info": info_path}


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


def _markdown(title, meta, claims, verdicts, sections, captions) -> str:
    parts = [f"# {title}", "", "## Claims", "",
             _md_table(["claim", "where", "verdict", "why", "deciding reading"],
                       [[f"`{c['id']}`", c["location"], f"**{c['verdict']}**",
                         _short(c["headline"]), c["deciding_reading"] or "-"]
                        for c in claims]), "",
             f"Headline rule: {HEADLINE_RULE}", ""]
    parts += ["## Run", ""] + _md_meta(meta)
    parts += ["", "## Readings", "",
              _md_table(["claim", "reading", "verdict", "certificate"],
                        [[v.claim.id, v.reading, f"**{v.verdict}**",
                          "yes" if v.certificate else "no"] for v in verdicts]), ""]
    parts += ["## Verdicts", ""]
    for v in verdicts:
        parts += [f"### `{v.claim.id}` — {v.reading}: **{v.verdict}**", "",
                  f"*{v.claim.paper}, {v.claim.location}.* Check: {v.claim.check}.", "",
                  "> " + v.claim.statement.replace("\n", "\n> "), "",
                  v.sentence, "", _seed_budget(v), ""]
        parts += [_md_figure(f, captions) for f in v.figures]
        parts += ["", "<details><summary>evidence</summary>", "", "```json",
                  json.dumps(to_jsonable(v.evidence), indent=1)[:20000], "```", "</details>", ""]
    for s in sections:
        parts += [f"## {s['title']}", "", s.get("text", ""), ""]
        if s.get("table"):
            parts += [_md_table(s["table"]["columns"], s["table"]["rows"]), ""]
        parts += [_md_figure(f, captions) for f in s.get("figures", [])]
        parts.append("")
    return "\n".join(parts) + "\n"


def _seed_budget(v: Verdict) -> str:
    """"Seed 3, budget smoke." without the parts a verdict does not have."""
    bits = [f"seed {v.seed}" if v.seed is not None else "",
            f"budget {v.budget}" if v.budget is not None else ""]
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
    out = ["<h2 id='run'>Run</h2><ul>"]
    out += [f"<li><b>{esc(str(k))}</b>: {esc(_flat(v))}</li>" for k, v in meta.items()
            if not isinstance(v, dict)]
    out.append("</ul>")
    for k, v in meta.items():
        if isinstance(v, dict):
            out.append(f"<p><b>{esc(str(k))}</b></p>"
                       + _html_table(["", ""], [[kk, _flat(vv)] for kk, vv in v.items()]))
    return "".join(out)


def _short(sentence: str, limit: int = 220) -> str:
    """The headline sentence cut to ``limit`` characters at a word boundary."""
    one = " ".join(sentence.split())
    if len(one) <= limit:
        return one
    return one[:limit].rsplit(" ", 1)[0] + " ..."


def _img(out: Path, name: str, captions: dict) -> str:
    path = out / name
    if not path.is_file():
        return f"<p><em>figure {html.escape(name)} missing</em></p>"
    data = base64.b64encode(path.read_bytes()).decode()
    text = caption(name, captions)
    cap = f"{html.escape(text)} ({html.escape(name)})" if text else html.escape(name)
    return (f'<figure><img alt="{html.escape(text or name)}" src="data:image/png;base64,'
            f'{data}" style="max-width:100%"><figcaption>{cap}</figcaption></figure>')


def _md_figure(name: str, captions: dict) -> str:
    """The image and its caption (:func:`caption`)."""
    text = caption(name, captions)
    return f"![{text or name}]({name})" + (f"\n\n*{text}* (`{name}`)" if text else "")


def _html_table(columns, rows) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html(title, meta, claims, verdicts, sections, out: Path, captions) -> str:
    esc = html.escape
    heads = "".join(
        f"<tr><td><code>{esc(c['id'])}</code></td><td>{esc(c['location'])}</td>"
        f"<td class='verdict'><b style='color:{_BADGE[c['verdict']]}'>{esc(c['verdict'])}"
        f"</b></td><td>{esc(_short(c['headline']))}</td>"
        f"<td>{esc(c['deciding_reading'] or '-')}</td>"
        "</tr>" for c in claims)
    rows = "".join(
        f"<tr><td><code>{esc(v.claim.id)}</code></td><td>{esc(v.reading)}</td>"
        f"<td><b style='color:{_BADGE[v.verdict]}'>{esc(v.verdict)}</b></td>"
        f"<td>{'yes' if v.certificate else 'no'}</td></tr>" for v in verdicts)
    body = [f"<h1>{esc(title)}</h1><h2 id='claims'>Claims</h2><table class='headline'>"
            "<thead><tr><th>claim</th><th>where</th><th>verdict</th><th>why</th>"
            f"<th>deciding reading</th></tr></thead><tbody>{heads}</tbody></table>"
            f"<p><small>Headline rule: {esc(HEADLINE_RULE)}</small></p>"]
    toc = [("run", "Run"), ("readings", "Readings"), ("verdicts", "Verdicts and evidence")]
    toc += [(f"section-{i}", sec["title"]) for i, sec in enumerate(sections)]
    body.append("<nav><b>Contents</b>: " + " · ".join(
        f"<a href='#{a}'>{esc(t)}</a>" for a, t in toc) + "</nav>")
    body += [_html_meta(meta)]
    body += ["<h2 id='readings'>Readings</h2><table><thead><tr><th>claim</th><th>reading</th>"
             "<th>verdict</th><th>certificate</th></tr></thead><tbody>", rows,
             "</tbody></table><h2 id='verdicts'>Verdicts and evidence</h2>"]
    for v in verdicts:
        body += [f"<h3><code>{esc(v.claim.id)}</code> — {esc(v.reading)}: "
                 f"<span style='color:{_BADGE[v.verdict]}'>{esc(v.verdict)}</span></h3>",
                 f"<p><i>{esc(v.claim.paper)}, {esc(v.claim.location)}.</i> "
                 f"Check: {esc(v.claim.check)}.</p>",
                 f"<blockquote>{esc(v.claim.statement)}</blockquote>",
                 f"<p>{esc(v.sentence)}</p><p>{esc(_seed_budget(v))}</p>"]
        body += [_img(out, f, captions) for f in v.figures]
        body += ["<details><summary>evidence</summary><pre>",
                 esc(json.dumps(to_jsonable(v.evidence), indent=1)[:20000]),
                 "</pre></details>"]
    for i, s in enumerate(sections):
        body += [f"<h2 id='section-{i}'>{esc(s['title'])}</h2>"]
        body += [f"<p>{esc(p)}</p>" for p in s.get("text", "").split("\n\n") if p]
        if s.get("table"):
            body.append(_html_table(s["table"]["columns"], s["table"]["rows"]))
        body += [_img(out, f, captions) for f in s.get("figures", [])]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;line-height:1.4}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
             "table.headline td{overflow-wrap:anywhere;vertical-align:top}"
             "table.headline td.verdict{white-space:nowrap;overflow-wrap:normal}"
             "blockquote{border-left:4px solid #ccc;margin-left:0;padding-left:1em;color:#333}"
             "pre{background:#f6f6f6;padding:1em;overflow:auto;max-height:30em}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
