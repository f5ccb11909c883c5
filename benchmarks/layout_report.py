"""The Markdown tables write_layouts.py prints: per candidate, the median
of its rounds and the median of the rounds' ratios to today's layout."""
import statistics

from layout_timing import ratio


def markdown_writes(title, layouts, rows, base_label):
    lines = [f"| {title} | run 1 (empty catalog) | × {base_label} | run 2 (holding run 1) | × {base_label} | file MiB |",
             "|---|---:|---:|---:|---:|---:|"]
    for layout in layouts:
        r = rows[layout.key]
        one = f"{r[1]['s']:.2f} s | {r[1]['x']:.2f}"
        two = f"{r[2]['s']:.2f} s | {r[2]['x']:.2f}" if 2 in r else "as " + ("a" if layout.key == "a2" else "b") + " | "
        lines.append(f"| {layout.key}: {layout.label} | {one} | {two} | {r['mib']:.0f} |")
    return "\n".join(lines)


def markdown_reads(title, keys, names, values, base_of):
    lines = [f"| {title} | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for key in keys:
        cells = []
        for name in names:
            if (key, name) not in values:
                cells.append("—")
                continue
            ms = statistics.median(values[(key, name)]) * 1000
            base = base_of(name)
            x = f" ({ratio(values, (key, name), base):.2f}×)" if base in values and base != (key, name) else ""
            cells.append(f"{ms:.3g} ms{x}")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
