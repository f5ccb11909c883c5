"""What suite.py reports: a run's Markdown section for results.md, and its
chart of ratios against the peers (out/bench-<size>.png)."""
from peers import DUCKDB, DUCKDB_QUERY, ENGINE, ENGINE_BATCH_COMMAND, ENGINE_BATCH_LOCATING


def markdown(r):
    i = r["import"]
    lines = [f"### {r['size']}, {r.get('workload', 'city')} workload: {r['fences']:,} fences, {r['fixes']:,} fixes ({r['date']}, {r['machine']}, medians of {r['runs']})", "",
             "| measure | engine | peer | engine vs peer |", "|---|---:|---:|---:|",
             f"| import wall time | {i['engine_s']:.1f} s | ogr2ogr {i['ogr2ogr_s']:.1f} s | {i['ogr2ogr_s'] / i['engine_s']:.2f}× |",
             f"| import peak RSS | {i['engine_rss_mib']:.0f} MiB | ogr2ogr {i['ogr2ogr_rss_mib']:.0f} MiB | |",
             f"| database size | {i['engine_db_mib']:.0f} MiB | ogr2ogr {i['ogr2ogr_db_mib']:.0f} MiB | {i['engine_db_mib'] / i['ogr2ogr_db_mib']:.2f}× the size |"]
    if "containment" in r:
        c = r["containment"]
        # The locate phase is the figure comparable with peers timed with their data loaded.
        base_name = ENGINE_BATCH_LOCATING if ENGINE_BATCH_LOCATING in c else ENGINE
        base = c[base_name]["s"]
        for name, v in c.items():
            if name == base_name:
                continue
            if name in (DUCKDB, DUCKDB_QUERY):
                continue  # below, against the engine's figure of the same kind
            if name.startswith("engine"):  # the engine's other paths: times, not ratios
                lines.append(f"| containment question, {name} | {v['s']:.2f} s | | |")
            else:
                lines.append(f"| containment question ({r['containment_fixes']:,} fixes, {c[base_name]['pairs']:,} pairs) | {base:.2f} s | {name} {v['s']:.2f} s | {v['s'] / base:.2f}× |")
    j = r["judgement"]
    judgement_lines(lines, j, "")
    lines.append(f"| with `--out` CSV / with `--explain` ({j['explain_rows']:,} rows) | {j['with_out_csv_s']:.2f} s / {j['with_explain_s']:.2f} s | | |")
    h = j["output_hashes"]
    lines.append(f"| output hashes (SQL canonical order / --out) | `{h['notifications_sql']}` / `{h['out_csv']}` | | |")
    if "compared_output_hashes" in j:
        c = j["compared_output_hashes"]
        same = "identical" if c == h else "DIFFERENT"
        lines.append(f"| output hashes of {j['compared_dist']} | `{c['notifications_sql']}` / `{c['out_csv']}` ({same}) | | |")
    if "judgement_batch_pages" in r:
        b = r["judgement_batch_pages"]
        judgement_lines(lines, b, f", `init --page-size {b['page_size']}`")
        same = "identical" if b["output_hashes"] == h else "DIFFERENT"
        lines.append(f"| output hashes, `--page-size {b['page_size']}` | `{b['output_hashes']['notifications_sql']}` / `{b['output_hashes']['out_csv']}` ({same}) | | |")
    if "containment" in r and DUCKDB in r["containment"]:
        c = r["containment"]
        e2e, q = c[ENGINE_BATCH_COMMAND]["s"], c[ENGINE_BATCH_LOCATING]["s"]
        lines.append(f"| containment, end to end: engine command vs DuckDB (each from its stored catalog) | {e2e:.2f} s | {c[DUCKDB]['s']:.2f} s | {c[DUCKDB]['s'] / e2e:.2f}× |")
        lines.append(f"| containment, query phase: engine locating vs DuckDB's query | {q:.2f} s | {c[DUCKDB_QUERY]['s']:.2f} s | {c[DUCKDB_QUERY]['s'] / q:.2f}× |")
    for mode, v in r.get("check", {}).items():
        lines.append(f"| single gf_check, {mode} | p50 {v['p50_us']:.0f} µs, p99 {v['p99_us']:.0f} µs | | |")
    if "check_interleaved" in r:
        v = r["check_interleaved"]
        lines.append(f"| gf_check, {v['subjects']:,} subjects interleaved, with conditions, warm, one transaction ({v['measured']:,} calls) | "
                     f"p50 {v['p50_us']:.0f} µs, p99 {v['p99_us']:.0f} µs, p999 {v['p999_us']:.0f} µs | | |")
    return "\n".join(lines)


def judgement_lines(lines, j, catalog):
    for key, label in (("with_conditions", "full judgement, with conditions (notifications written)"),
                       ("no_conditions", "full judgement, no conditions (nothing notified)")):
        v = j[key]
        lines.append(f"| {label}{catalog} | {v['fixes_per_s']:,.0f} fixes/s ({v['s']:.2f} s; runs {v['runs_s']}), "
                     f"{v['notifications_per_s']:,.0f} notifications/s ({v['notifications']:,}, {v['notifications_per_fix']:.2f} per fix), "
                     f"peak RSS {v['rss_mib']:.0f} MiB | | |")
    lines.append(f"| marginal cost of a notification{catalog} | {j['marginal_us_per_notification']:.2f} µs | | |")


def chart(r, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names, ratios = [], []
    i = r["import"]
    if i["ogr2ogr_s"] == i["ogr2ogr_s"]:   # not NaN (skipped)
        names.append("import vs ogr2ogr"); ratios.append(i["ogr2ogr_s"] / i["engine_s"])
    c = r.get("containment", {})
    base_name = ENGINE_BATCH_LOCATING if ENGINE_BATCH_LOCATING in c else ENGINE
    for name, v in c.items():
        if name in (DUCKDB, DUCKDB_QUERY):
            continue
        if name != base_name and not name.startswith("engine"):
            names.append(f"containment vs {name.split(' (')[0]}"); ratios.append(v["s"] / c[base_name]["s"])
    if DUCKDB in c:
        names.append("containment end to end vs DuckDB"); ratios.append(c[DUCKDB]["s"] / c[ENGINE_BATCH_COMMAND]["s"])
        names.append("containment query vs DuckDB"); ratios.append(c[DUCKDB_QUERY]["s"] / c[ENGINE_BATCH_LOCATING]["s"])
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(names) + 1.2))
    ax.barh(names, ratios, color=["tab:green" if x >= 1 else "tab:red" for x in ratios])
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xscale("log")
    lo, hi = min(ratios + [1]) / 1.6, max(ratios + [1]) * 2.2
    ax.set_xlim(lo, hi)
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:g}×" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("engine speed-up (peer time / engine time; > 1 = engine faster)")
    ax.set_title(f"{r['size']}: {r['fences']:,} fences, {r['fixes']:,} fixes")
    for y, x in enumerate(ratios):
        ax.text(x, y, f" {x:.0f}×" if x >= 10 else f" {x:.1f}×", va="center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
