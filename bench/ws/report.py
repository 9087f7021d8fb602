#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/ws/report.py RESULTDIR: results.md and gnuplot PNG charts from bench/realtime's raw.tsv.

Medians over rounds; ratios to the raw libh2o + wslay baseline. Python standard library only;
the charts are drawn by gnuplot (pngcairo), as bench/report.py draws bench/run's."""
import os, statistics, subprocess, sys

res = sys.argv[1]
rows = []
with open(os.path.join(res, "raw.tsv")) as f:
    next(f)
    for line in f:
        kind, server, size, conns, rnd, result = line.rstrip("\n").split("\t", 5)
        kv = dict(p.split("=", 1) for p in result.split() if "=" in p)
        rows.append((kind, server, int(size), int(conns), kv))

out = ["# bench/realtime results", "", "```", open(os.path.join(res, "meta.txt")).read().strip(), "```", ""]
out += ["## WebSocket echo (closed loop, 1 server thread on core 0, wsload on core 1)", "",
        "| size | conns | server | msgs/s (median) | vs baseline | p50 ms | p99 ms | rounds |",
        "|---:|---:|---|---:|---:|---:|---:|---:|"]
cells, chart = {}, []
for kind, s, size, conns, kv in rows:
    if kind == "echo" and "msgs_per_s" in kv:
        cells.setdefault((size, conns, s), []).append(kv)
for size in (64, 16384):
    for conns in (100, 1000):
        med = {}
        for s in ("canal", "baseline", "ws"):
            runs = cells.get((size, conns, s), [])
            if not runs:
                continue
            med[s] = (statistics.median(float(r["msgs_per_s"]) for r in runs),
                      statistics.median(float(r["p50_us"]) for r in runs) / 1e3,
                      statistics.median(float(r["p99_us"]) for r in runs) / 1e3, len(runs))
        base = med.get("baseline", (0,))[0]
        for s, (m, p50, p99, n) in med.items():
            ratio = f"{m / base:.2f}" if base else "?"
            out.append(f"| {size} B | {conns} | {s} | {m:,.0f} | {ratio} | {p50:.2f} | {p99:.2f} | {n} |")
        chart.append((f"{'16K' if size == 16384 else '64'}B/{conns}c", [med.get(s, (0,))[0] for s in ("canal", "baseline", "ws")]))

out += ["", "## Broadcast fan-out and idle sockets", "",
        "| server | sockets | fan-out ms (each of the rounds) | RSS before KiB | RSS open KiB | bytes per idle socket |",
        "|---|---:|---|---:|---:|---:|"]
for kind, s, size, conns, kv in rows:
    if kind in ("fanout", "idle"):
        out.append(f"| {s} | {kv.get('conns', conns)} | {kv.get('fanout_ms', '-') or '-'} | {kv.get('rss_before_kib')} "
                   f"| {kv.get('rss_open_kib')} | {kv.get('per_conn_bytes')} |")
out += ["", "## SSE streams held open (canal, 1 thread)", "",
        "| streams | RSS before KiB | RSS open KiB | RSS 5 s later KiB | bytes per stream |", "|---:|---:|---:|---:|---:|"]
for kind, s, size, conns, kv in rows:
    if kind == "sse":
        out.append(f"| {kv.get('conns')} | {kv.get('rss_before_kib')} | {kv.get('rss_open_kib')} | {kv.get('rss_later_kib')} "
                   f"| {kv.get('per_conn_bytes')} |")
open(os.path.join(res, "results.md"), "w").write("\n".join(out) + "\n")

if chart:
    os.makedirs(os.path.join(res, "plot"), exist_ok=True)
    dat = os.path.join(res, "plot", "echo.dat")
    with open(dat, "w") as f:
        f.write("cell canal baseline ws\n")
        for label, vals in chart:
            f.write(label + " " + " ".join(f"{v:.0f}" for v in vals) + "\n")
    gp = (f"set terminal pngcairo size 1000,550 font 'sans,10' noenhanced\nset output '{os.path.join(res, 'echo.png')}'\n"
          "set title 'WebSocket echo: messages/s (median of rounds, 1 core)'\nset style data histograms\n"
          "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\nset key outside right top\n"
          "set yrange [0:*]\nset grid ytics\n"
          f"plot '{dat}' using 2:xtic(1) title columnheader, '' using 3 title columnheader, '' using 4 title columnheader\n")
    subprocess.run(["gnuplot"], input=gp, text=True, check=False)
print(os.path.join(res, "results.md"))
