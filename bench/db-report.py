#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/db-report.py RESULTDIR: turns bench/db's runs.tsv, ir.tsv, rss.tsv and pgbench.tsv into
results.md (medians over rounds, ratios to the baseline, the issues' goals) and db.png (gnuplot,
when it is installed). Python standard library only."""
import os
import statistics
import subprocess
import sys

SERVERS = ["baseline", "canal", "offload"]
NAMES = {"baseline": "tfb-baseline (raw libh2o + libpq pipeline)", "canal": "canal-tfb (canal_db)",
         "offload": "tfb-offload (canal, blocking libpq on the offload pool)"}
ENDPOINTS = ["db", "queries", "updates", "fortunes", "cached"]
PATHS = {"db": "/db", "queries": "/queries?queries=20", "updates": "/updates?queries=20", "fortunes": "/fortunes",
         "cached": "/cached-queries?count=20"}


def table(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def goal(ratio):
    if ratio is None:
        return ""
    if ratio >= 1.0:
        return "met"
    if ratio >= 0.95:
        return "within noise (>= 0.95)"
    return "**missed** (< 0.95)"


def main():
    res = sys.argv[1]
    meta = {}
    if os.path.exists(os.path.join(res, "meta.txt")):
        for line in open(os.path.join(res, "meta.txt")):
            k, _, v = line.rstrip("\n").partition(" ")
            meta[k] = v
    runs = table(os.path.join(res, "runs.tsv"))
    rps, p99, errs = {}, {}, {}
    for r in runs:
        key = (r["endpoint"], r["server"])
        rps.setdefault(key, []).append(float(r["rps_2xx"]))
        p99.setdefault(key, []).append(float(r["p99_us"]))
        errs[key] = errs.get(key, 0) + int(r["errors"]) + int(r["non2xx"])
    med = {k: statistics.median(v) for k, v in rps.items()}
    # the ratio in each round (the servers ran minutes apart at most), then their median: less
    # moved by the machine's drift than the ratio of the medians
    by_round = {(r["round"], r["endpoint"], r["server"]): float(r["rps_2xx"]) for r in runs}
    paired = {}
    for (rnd, e, s), v in by_round.items():
        b = by_round.get((rnd, e, "baseline"))
        if s != "baseline" and b:
            paired.setdefault((e, s), []).append(v / b)
    pmed = {k: statistics.median(v) for k, v in paired.items()}
    servers = [s for s in SERVERS if any(k[1] == s for k in med)]
    endpoints = [e for e in ENDPOINTS if any(k[0] == e for k in med)]
    out = []
    out.append("# bench/db: %s" % res)
    out.append("")
    out.append("canal %s, %s; %s CPUs (%s), shared with other work; PostgreSQL %s over %s, on the same machine, "
               "not pinned (it shares both cores with the server and wrk). One server worker thread pinned to "
               "core 0, wrk -t1 -c%s pinned to core 1; %s rounds of %s s, servers rotated; medians. Pool: %s "
               "connections a worker (baseline, canal-tfb), %s offload threads (tfb-offload)." % (
                   meta.get("canal", "?"), meta.get("date", "?"), meta.get("cpus", "?"), meta.get("cpu", "?"),
                   meta.get("postgresql", "?"), meta.get("transport", "?"), meta.get("conns", "?"),
                   meta.get("rounds", "?"), meta.get("duration", "?"), meta.get("pool", "?"),
                   meta.get("offload_threads", "?")))
    out.append("")
    head = "| endpoint | " + " | ".join(servers) +  " | canal / baseline | per-round ratios' median | goal | offload / baseline | p99 canal / baseline (ms) | errors |"
    out.append(head)
    out.append("|---|" + "---:|" * len(servers) + "---:|---:|---|---:|---:|---:|")
    for e in endpoints:
        cells = []
        for s in servers:
            v = med.get((e, s))
            cells.append("%.0f" % v if v is not None else "n/a")
        b, c, o = med.get((e, "baseline")), med.get((e, "canal")), med.get((e, "offload"))
        rc = c / b if b and c else None
        ro = o / b if b and o else None
        pc = statistics.median(p99[(e, "canal")]) / 1000 if (e, "canal") in p99 else None
        pb = statistics.median(p99[(e, "baseline")]) / 1000 if (e, "baseline") in p99 else None
        err = sum(errs.get((e, s), 0) for s in servers)
        pc_ = pmed.get((e, "canal"))
        out.append("| `%s` | %s | %s | %s | %s | %s | %s | %s |" % (
            PATHS[e], " | ".join(cells), "%.2f" % rc if rc else "", "%.2f" % pc_ if pc_ else "", goal(rc),
            "%.2f" % ro if ro else "",
            "%.1f / %.1f" % (pc, pb) if pc is not None and pb is not None else "", err))
    out.append("")
    out.append("Every run (req/s): " + "; ".join(
        "%s %s: %s" % (PATHS[e], s, ", ".join("%.0f" % x for x in rps[(e, s)]))
        for e in endpoints for s in servers if (e, s) in rps))
    out.append("")

    ir = table(os.path.join(res, "ir.tsv"))
    if ir:
        per = {(r["endpoint"], r["server"]): int(r["per_request"]) for r in ir}
        out.append("Instructions per request (callgrind, user space of the server process only, PostgreSQL "
                   "excluded; one worker thread, one connection; h2load --h1 -c 1, N1=%s, N2=%s):" % (
                       meta.get("n1", "?"), meta.get("n2", "?")))
        out.append("")
        out.append("| endpoint | baseline | canal-tfb | canal / baseline | goal |")
        out.append("|---|---:|---:|---:|---|")
        for e in ENDPOINTS:
            b, c = per.get((e, "baseline")), per.get((e, "canal"))
            if b is None and c is None:
                continue
            r = c / b if b and c else None
            g = ("met" if r <= 1.10 else "**missed** (> 1.10)") if r is not None and e == "db" else ""
            out.append("| `%s` | %s | %s | %s | %s |" % (PATHS[e], b if b is not None else "n/a",
                                                        c if c is not None else "n/a", "%.2f" % r if r else "", g))
        out.append("")

    rss = table(os.path.join(res, "rss.tsv"))
    if rss:
        by = {(r["server"], int(r["pool"])): int(r["rss_kib"]) for r in rss if r["rss_kib"]}
        out.append("Memory per idle pooled connection (RSS of the server with --pool 64 minus --pool 1, / 63; "
                   "the PostgreSQL backend's own memory is not in it):")
        out.append("")
        out.append("| server | RSS, pool 1 (KiB) | RSS, pool 64 (KiB) | per connection (KiB) |")
        out.append("|---|---:|---:|---:|")
        for s in ("baseline", "canal"):
            a, b = by.get((s, 1)), by.get((s, 64))
            if a is None or b is None:
                continue
            out.append("| %s | %d | %d | %.1f |" % (s, a, b, (b - a) / 63))
        out.append("")

    pgb = table(os.path.join(res, "pgbench.tsv"))
    if pgb:
        out.append("The database's own figure (pgbench, %s clients, one pgbench thread pinned to core 1, "
                   "prepared statements): %s." % (pgb[0]["clients"], "; ".join(
                       "%s %.0f tps" % (r["test"], float(r["tps"] or 0)) for r in pgb)))
        out.append("")
    text = "\n".join(out)
    open(os.path.join(res, "results.md"), "w").write(text)
    print(text)

    # the chart: median req/s by endpoint, one bar per server
    if endpoints and subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode == 0:
        dat = os.path.join(res, "db.dat")
        labels = {"db": "/db", "queries": "/queries (20)", "updates": "/updates (20)", "fortunes": "/fortunes",
                  "cached": "/cached-queries (20)"}
        with open(dat, "w") as f:
            for e in endpoints:
                f.write('"%s"\t' % labels[e] +
                        "\t".join("%.0f" % med[(e, s)] if (e, s) in med else "0" for s in servers) + "\n")
        colors = {"baseline": "#d62728", "canal": "#1f77b4", "offload": "#6baed6"}
        plots = ", ".join("'%s' using %d:xtic(1) title '%s' lc rgb '%s'" % (dat, i + 2, NAMES[s], colors[s])
                          for i, s in enumerate(servers))
        script = ("set terminal pngcairo size 1000,560 font ',10' noenhanced; set output '%s';"
                  "set title 'TechEmpower database tests, one worker thread (median req/s, higher is better)';"
                  "set style data histograms; set style histogram clustered gap 1; set style fill solid 0.9 border -1;"
                  "set logscale y; set yrange [100:*]; set ylabel 'req/s (log)'; set key outside bottom center horizontal noenhanced;"
                  "set grid ytics; plot %s" % (os.path.join(res, "db.png"), plots))
        subprocess.run(["gnuplot", "-e", script], check=False)


if __name__ == "__main__":
    main()
