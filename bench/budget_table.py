#!/usr/bin/env python3
"""bench/budget's table: each figure beside its goal and the base commit's figure of the same run.

Usage: bench/budget_table.py RAW MARKDOWN README [--quick]
RAW is bench/results/raw/budget.txt (lines `TREE KEY VALUE`, TREE one of base, now, rg, or a
header line `KEY VALUE...`). Writes MARKDOWN and the block between README's `<!-- budget:begin -->`
and `<!-- budget:end -->` markers.
"""
import math
import statistics
import sys
from collections import defaultdict

TREES = ("base", "now", "rg")


def read(path):
    head, vals = {}, defaultdict(lambda: defaultdict(list))
    for line in open(path):
        w = line.split()
        if not w:
            continue
        if w[0] in TREES and len(w) >= 3:
            try:
                vals[w[0]][w[1]].append(float(w[2]))
            except ValueError:
                vals[w[0]][w[1]].append(math.inf)  # "never"
        else:
            head[w[0]] = " ".join(w[1:])
    return head, vals


def figures(v, rg_s, lines):
    """One tree's figures: name -> value (None where the run printed none)."""
    one = lambda k, f=statistics.median: f(v[k]) if v.get(k) else None
    f = {}
    best = one("classify_s", min)
    f["classify"] = rg_s / best if best and rg_s else None
    f["classify_lps"] = lines / best if best else None
    f["ready"] = one("ready_s")
    f["agent_cores"] = one("agent_cores_per_10k")
    f["agent_lps"] = one("agent_lps")
    cpu, wrote = one("rss_cpu_pct"), one("rss_lines_per_s_written")
    f["agent_cores_100"] = cpu / 100 / (wrote / 10_000) if cpu is not None and wrote else None
    f["agent_rss_max"] = one("rss_rss_max_mb")
    f["agent_rss_median"] = one("rss_rss_median_mb")
    f["job"] = one("job_rps")
    f["job_us"] = one("job_us_per_record")
    f["p50"] = one("latency_p50_ms")
    f["p99"] = one("latency_p99_ms")
    f["first"] = one("first_incident_ms")
    return f


# name, what, goal text, goal test (None: reported, no goal), format
ROWS = [
    ("agent_cores", "agent: cores per 10,000 lines/s, catching up on one file (AgentThroughput, -Xmx64m)",
     "≤ 0.080", lambda x: x <= 0.080, "{:.3f}"),
    ("agent_cores_100", "agent: cores per 10,000 lines/s, following 100 files at 10,000 lines/s",
     "≤ 0.080", lambda x: x <= 0.080, "{:.3f}"),
    ("agent_rss_max", "agent: RSS max MB, 100 files at 10,000 lines/s", "≤ 100", lambda x: x <= 100, "{:.0f}"),
    ("agent_rss_median", "agent: RSS median MB, same run", "", None, "{:.0f}"),
    ("agent_lps", "agent: lines/s catching up (same run as its cores)", "", None, "{:,.0f}"),
    ("job", "job: records/s, Kafka → Flink (p=2, exactly once) → incidents, the last nine tenths of "
     "2 M records (median of 3)", "≥ 200,000", lambda x: x >= 200_000, "{:,.0f}"),
    ("job_us", "job: CPU µs per record, same window (median of 3)", "", None, "{:.1f}"),
    ("classify", "classify --json, whole process, against ripgrep's keyword scan", "≥ 0.50×",
     lambda x: x >= 0.5, "{:.2f}×"),
    ("classify_lps", "classify --json, lines/s (best of 3)", "", None, "{:,.0f}"),
    ("p50", "line → alert p50 ms at 10,000 lines/s", "", None, "{:.0f}"),
    ("p99", "line → alert p99 ms at 10,000 lines/s", "≤ 250", lambda x: x <= 250, "{:.0f}"),
    ("first", "first incident ms after local is ready", "≤ 500", lambda x: x <= 500, "{:.0f}"),
    ("ready", "local: s from start to `running` (median)", "≤ 5.0", lambda x: x <= 5.0, "{:.1f}"),
]


def cell(fmt, x):
    if x is None:
        return "–"
    if x == math.inf:
        return "never"
    return fmt.format(x)


def table(head, vals):
    lines = int(float(head.get("lines", "0")))
    rg_s = min(vals["rg"]["classify_s"]) if vals["rg"].get("classify_s") else None
    base, now = figures(vals["base"], rg_s, lines), figures(vals["now"], rg_s, lines)
    md = ["| figure | goal | base " + head["base"] + " | now " + head["now"] + " | now / base | goal met |",
          "|---|---:|---:|---:|---:|:---:|"]
    for key, what, goal, test, fmt in ROWS:
        b, n = base[key], now[key]
        ratio = f"{n / b:.2f}" if b and n is not None and math.isfinite(b) and math.isfinite(n) else "–"
        met = "" if test is None or n is None else ("yes" if test(n) else "**no**")
        md.append(f"| {what} | {goal} | {cell(fmt, b)} | {cell(fmt, n)} | {ratio} | {met} |")
    return md


def main():
    raw, out, readme = sys.argv[1:4]
    quick = "--quick" in sys.argv[4:]
    head, vals = read(raw)
    when = (f"{head['date']}, commit {head['now']} against base {head['base']}, {head['cores']} cores, "
            f"load average {head.get('load_before', '?')} before and {head.get('load_after', '?')} after")
    rows = table(head, vals)
    md = ["# Performance budget", "",
          f"`bench/budget` ({when})" + (" — a --quick smoke run, not for quoting" if quick else "") + ".",
          "Each pair of figures was measured back to back in one run on one machine; the base is "
          "`bench/budget-base`. A regression shows as a ratio on the wrong side of 1.", ""] + rows + [
          "", "Every run of every figure (`raw/budget.txt`; seconds, ms, MB as named):", "", "```",
          open(raw).read().rstrip("\n"), "```", ""]
    open(out, "w").write("\n".join(md))
    print("\n".join(md))
    text = open(readme).read()
    begin, end = "<!-- budget:begin -->", "<!-- budget:end -->"
    if begin in text and end in text:
        block = [begin, "", f"Measured by `bench/budget` on {when}" + (" (quick smoke run)" if quick else "") + ":",
                 ""] + rows + ["", end]
        text = text[: text.index(begin)] + "\n".join(block) + text[text.index(end) + len(end):]
        open(readme, "w").write(text)
    else:
        print(f"budget_table: no budget markers in {readme}; left as it is", file=sys.stderr)


if __name__ == "__main__":
    main()
