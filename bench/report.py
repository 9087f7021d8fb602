#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/report.py RESULTDIR: turns bench/run's runs.tsv into results.md and PNG charts.

Medians over rounds for req/s, latency percentiles, throughput and server CPU; sums for errors
and non-2xx answers; the largest RSS seen. Ratios are ratios of medians. Charts are drawn by
gnuplot (pngcairo) from data files written into RESULTDIR/plot/. Python standard library only.
"""
import collections
import os
import statistics
import subprocess
import sys

ORDER = ["canal-router", "canal-controller", "baseline", "baseline-b", "ulfius", "evhtp", "nginx", "fastify"]
PEERS = ["ulfius", "evhtp", "nginx", "fastify"]
ENDPOINTS = ["plaintext", "json", "employee", "orders", "woo"]
PATHS = {"plaintext": "/home/plaintext", "json": "/home/json", "employee": "/home/employee/3",
         "orders": "/home/orders/3?index=0&size=5", "woo": "/api/woo"}
COLORS = {"canal-router": "#1f77b4", "canal-controller": "#6baed6", "baseline": "#d62728", "baseline-b": "#ff9896",
          "ulfius": "#9467bd", "evhtp": "#8c564b", "nginx": "#2ca02c", "fastify": "#ff7f0e"}


def load(path):
    rows = []
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            v = line.rstrip("\n").split("\t")
            if len(v) != len(head):
                continue
            r = dict(zip(head, v))
            for k in head:
                if k not in ("server", "endpoint"):
                    r[k] = float(r[k]) if r[k] else 0.0
            rows.append(r)
    return rows


def summarize(rows):
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["server"], int(r["threads"]), r["endpoint"], int(r["conns"]))].append(r)
    out = {}
    for key, rs in groups.items():
        ok = [r for r in rs if r["duration_us"] > 0]
        med = lambda f: statistics.median([f(r) for r in ok]) if ok else 0.0  # noqa: E731
        out[key] = {
            "rounds": len(rs),
            "rps": med(lambda r: r["requests"] / (r["duration_us"] / 1e6)),
            "rps_all": [r["requests"] / (r["duration_us"] / 1e6) if r["duration_us"] > 0 else 0.0 for r in rs],
            "p50": med(lambda r: r["p50_us"]) / 1000, "p75": med(lambda r: r["p75_us"]) / 1000,
            "p90": med(lambda r: r["p90_us"]) / 1000, "p99": med(lambda r: r["p99_us"]) / 1000,
            "p999": med(lambda r: r["p999_us"]) / 1000, "p9999": med(lambda r: r["p9999_us"]) / 1000,
            "mbs": med(lambda r: r["bytes"] / (r["duration_us"] / 1e6) / 1e6),
            "cpu": med(lambda r: r["server_cpu_pct"]),
            "wrk": med(lambda r: r.get("wrk_cpu_pct", 0.0)),
            "other": med(lambda r: r.get("other_cpu_pct", 0.0)),
            "other_max": max((r.get("other_cpu_pct", 0.0) for r in rs), default=0.0),
            "by_round": {int(r["round"]): r["requests"] / (r["duration_us"] / 1e6) for r in ok},
            "requests": sum(r["requests"] for r in rs),
            "non2xx": sum(r["non2xx"] for r in rs),
            "sockerr": sum(r["err_connect"] + r["err_read"] + r["err_write"] + r["err_timeout"] for r in rs),
            "failed_runs": len(rs) - len(ok),
            "rss": statistics.median(r["rss_kb"] for r in rs) / 1024,
        }
    return out


QUIET_PCT = 25  # bench/run's default --quiet-pct


def busy(*ms):
    """True if a run of any of these cells had other processes using more than QUIET_PCT% of a core."""
    return any(m and m["other_max"] > QUIET_PCT for m in ms)


def paired(S, a, b):
    """Median over rounds of a's req/s divided by b's in the same round (the two ran within
    seconds of each other, so drift on the machine mostly cancels), or None."""
    if not a or not b:
        return None
    rs = [a["by_round"][r] / b["by_round"][r] for r in a["by_round"] if b["by_round"].get(r)]
    return statistics.median(rs) if rs else None


def fmt_rps(x):
    return f"{x:,.0f}"


def ratio(a, b):
    return a / b if a and b else None


def fmt_ratio(x):
    return f"{x:.2f}x" if x is not None else "-"


def ordered(names):
    return [s for s in ORDER if s in names] + sorted(n for n in names if n not in ORDER)


def single_core_md(S, servers, conns, endpoints, lines):
    base = lambda e, c: S.get(("baseline", 1, e, c))  # noqa: E731
    lines.append("## Requests per second, ratio to the raw libh2o baseline\n")
    lines.append("req/s: median over rounds. Ratio: median over rounds of the two servers' req/s in the same "
                 "round (they ran seconds apart, so the machine's drift mostly cancels). One worker thread; "
                 "server on core 0, wrk on core 1.\n")
    for c in conns:
        lines.append(f"**{c} connections**\n")
        lines.append("| server | " + " | ".join(f"`{PATHS[e]}`" for e in endpoints) + " |")
        lines.append("|---|" + "---:|" * len(endpoints))
        for s in servers:
            cells = []
            for e in endpoints:
                m = S.get((s, 1, e, c))
                if not m:
                    cells.append("-")
                    continue
                r = paired(S, m, base(e, c))
                mark = " †" if busy(m, base(e, c)) else ""
                cells.append(f"{fmt_rps(m['rps'])} ({fmt_ratio(r)}){mark}" if r is not None else fmt_rps(m["rps"]) + mark)
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(f"† a run of this server or of the baseline in this cell had other processes using more than "
                 f"{QUIET_PCT}% of a core (see the CPU column below): treat the ratio with care.\n")

    lines.append("## Every measurement\n")
    lines.append("req/s and latency are medians over the rounds; non-2xx and socket errors (connect, read, "
                 "write, timeout) are totals over the rounds; RSS is the server's resident size read right after "
                 "the run (median over the rounds; memory of an earlier, larger load may not be returned yet); CPU is CPU time over the run's wall time (100% = one core) of the server, of "
                 "wrk, and of everything else on the machine (other processes, and kernel work charged to "
                 "neither), medians over the rounds.\n")
    for e in endpoints:
        lines.append(f"### `{PATHS[e]}`\n")
        lines.append("| server | conns | rounds | req/s | vs baseline | p50 ms | p90 ms | p99 ms | MB/s | non-2xx "
                     "| socket errors | RSS MB | CPU server / wrk / others |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c in conns:
            for s in servers:
                m = S.get((s, 1, e, c))
                if not m:
                    continue
                lines.append(f"| {s} | {c} | {m['rounds']} | {fmt_rps(m['rps'])} | {fmt_ratio(paired(S, m, base(e, c)))} "
                             f"| {m['p50']:.2f} | {m['p90']:.2f} | {m['p99']:.2f} | {m['mbs']:.1f} | {m['non2xx']:.0f} "
                             f"| {m['sockerr']:.0f} | {m['rss']:.1f} | {m['cpu']:.0f}% / {m['wrk']:.0f}% / {m['other']:.0f}% |")
        lines.append("")

    # goals of issue 5 that req/s can check
    lines.append("## Goals (req/s)\n")
    lines.append("Ratios as above (medians of same-round ratios).\n")
    goal_rows = []
    for e in endpoints:
        for c in conns:
            r = S.get(("canal-router", 1, e, c))
            b = S.get(("baseline", 1, e, c))
            k = S.get(("canal-controller", 1, e, c))
            if r and b:
                x = paired(S, r, b)
                t = " †" if busy(r, b) else ""
                goal_rows.append((f"router / baseline >= 0.97, `{PATHS[e]}`, c={c}{t}", x, x is not None and x >= 0.97))
                if e == "orders":
                    goal_rows.append((f"router / baseline >= 1.5 (JSON-heavy), `{PATHS[e]}`, c={c}{t}", x,
                                      x is not None and x >= 1.5))
            if r and k:
                x = paired(S, k, r)
                t = " †" if busy(r, k) else ""
                goal_rows.append((f"controller / router >= 0.95, `{PATHS[e]}`, c={c}{t}", x, x is not None and x >= 0.95))
            if r:
                for p in PEERS:
                    pm = S.get((p, 1, e, c))
                    if pm:
                        x = paired(S, r, pm)
                        t = " †" if busy(r, pm) else ""
                        goal_rows.append((f"router ahead of {p}, `{PATHS[e]}`, c={c}{t}", x, x is not None and x > 1.0))
    control = [paired(S, S[("baseline-b", 1, e, c)], S[("baseline", 1, e, c)])
               for e in endpoints for c in conns if ("baseline-b", 1, e, c) in S and ("baseline", 1, e, c) in S]
    control = [x for x in control if x is not None]
    if control:
        lines.append(f"A/A control: baseline-b, the same binary as the baseline, measured like the others, came "
                     f"out at {min(control):.2f}x to {max(control):.2f}x the baseline (median "
                     f"{statistics.median(control):.2f}x over {len(control)} cells): ratios inside that band are "
                     f"not a difference between servers.\n")
    if goal_rows:
        lines.append("| goal | ratio | met |")
        lines.append("|---|---:|---|")
        for g, x, ok in goal_rows:
            lines.append(f"| {g} | {fmt_ratio(x)} | {'yes' if ok else '**no**'} |")
        lines.append("")
    err_rows = []
    for s in servers:
        if not s.startswith("canal"):
            continue
        for c in conns:
            n2 = sum(S[k]["non2xx"] for k in S if k[0] == s and k[3] == c)
            se = sum(S[k]["sockerr"] for k in S if k[0] == s and k[3] == c)
            fr = sum(S[k]["failed_runs"] for k in S if k[0] == s and k[3] == c)
            err_rows.append(f"| {s} | {c} | {n2:.0f} | {se:.0f} | {fr} | {'yes' if n2 == 0 and se == 0 and fr == 0 else '**no**'} |")
    if err_rows:
        lines.append("Zero errors and zero non-2xx:\n")
        lines.append("| server | conns | non-2xx | socket errors | runs without a result | met |")
        lines.append("|---|---:|---:|---:|---:|---|")
        lines.extend(err_rows)
        lines.append("")


def multicore_md(S, servers, conns, endpoints, lines):
    lines.append("## Multi-core: req/s with 1 and 2 worker threads\n")
    lines.append("Server and wrk (2 threads) unpinned on the same 2 cores: the load generator takes CPU "
                 "from the server, so the 2-thread figure is a lower bound of the server's scaling.\n")
    lines.append("| server | endpoint | conns | 1 thread | 2 threads | 2 / 1 | server CPU 1t | server CPU 2t |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for s in servers:
        for e in endpoints:
            for c in conns:
                a, b = S.get((s, 1, e, c)), S.get((s, 2, e, c))
                if not a or not b:
                    continue
                lines.append(f"| {s} | `{PATHS[e]}` | {c} | {fmt_rps(a['rps'])} | {fmt_rps(b['rps'])} "
                             f"| {fmt_ratio(ratio(b['rps'], a['rps']))} | {a['cpu']:.0f}% | {b['cpu']:.0f}% |")
    lines.append("")


# ---- charts ----

def gp_head(png, w=1100, h=600):
    return (f"set terminal pngcairo size {w},{h} font 'sans,10' noenhanced\n"
            f"set output '{png}'\nset datafile missing '?'\nset key outside right top\n"
            "set grid ytics lc rgb '#dddddd'\n")


def histogram(path, title, ylabel, servers, endpoints, value, logy=False):
    dat = path[:-4] + ".dat"
    with open(dat, "w") as f:
        f.write("# endpoint " + " ".join(servers) + "\n")
        for e in endpoints:
            vals = [value(s, e) for s in servers]
            f.write(e + " " + " ".join(f"{v:.6g}" if v else "?" for v in vals) + "\n")
    gp = gp_head(path)
    gp += (f"set title '{title}'\nset ylabel '{ylabel}'\nset style data histogram\n"
           "set style histogram cluster gap 1\nset style fill solid 0.9 border -1\nset boxwidth 0.9\n"
           "set yrange [0:*]\n")
    if logy:
        gp += "set logscale y\nset yrange [*:*]\n"
    plots = [f"'{dat}' using {i + 2}:xtic(1) title '{s}' lc rgb '{COLORS.get(s, '#777777')}'"
             for i, s in enumerate(servers)]
    gp += "plot " + ", \\\n     ".join(plots) + "\n"
    return gp


def charts(S, res, servers, conns, endpoints, multicore):
    pdir = os.path.join(res, "plot")
    os.makedirs(pdir, exist_ok=True)
    scripts = {}
    made = []
    if multicore:
        cols = [f"{s} {t}t" for s in servers for t in (1, 2)]
        c = conns[0]
        dat = os.path.join(pdir, "multicore.dat")
        with open(dat, "w") as f:
            f.write("# endpoint " + " ".join(x.replace(" ", "_") for x in cols) + "\n")
            for e in endpoints:
                f.write(e + " " + " ".join(f"{S[(s, t, e, c)]['rps']:.0f}" if (s, t, e, c) in S else "?"
                                           for s in servers for t in (1, 2)) + "\n")
        gp = gp_head(os.path.join(res, "multicore.png"))
        gp += (f"set title 'Requests per second with 1 and 2 worker threads ({c} connections, server and wrk unpinned)'\n"
               "set ylabel 'req/s'\nset style data histogram\nset style histogram cluster gap 1\n"
               "set style fill solid 0.9 border -1\nset yrange [0:*]\n")
        shades = {1: 0.55, 2: 1.0}
        plots = []
        for i, (s, t) in enumerate((s, t) for s in servers for t in (1, 2)):
            plots.append(f"'{dat}' using {i + 2}:xtic(1) title '{s}, {t} thread{'s' if t > 1 else ''}' "
                         f"lc rgb '{COLORS.get(s, '#777777')}' fs solid {shades[t]}")
        gp += "plot " + ", \\\n     ".join(plots) + "\n"
        scripts["multicore"] = gp
    else:
        c = 100 if 100 in conns else conns[0]
        g = lambda s, e, k: S.get((s, 1, e, c), {}).get(k)  # noqa: E731
        scripts["requests"] = histogram(os.path.join(res, "requests.png"), f"Requests per second ({c} connections, 1 core)",
                                        "req/s", servers, endpoints, lambda s, e: g(s, e, "rps"))
        scripts["throughput"] = histogram(os.path.join(res, "throughput.png"), f"Throughput ({c} connections, 1 core)",
                                          "MB/s (headers and bodies)", servers, endpoints, lambda s, e: g(s, e, "mbs"))
        # latency: p50 and p99 side by side
        lat = gp_head(os.path.join(res, "latency.png"), 1100, 800)
        lat += "set multiplot layout 2,1\n"
        for k, name in (("p50", "median (p50)"), ("p99", "p99")):
            dat = os.path.join(pdir, f"latency-{k}.dat")
            with open(dat, "w") as f:
                f.write("# endpoint " + " ".join(servers) + "\n")
                for e in endpoints:
                    f.write(e + " " + " ".join(f"{g(s, e, k):.4g}" if g(s, e, k) else "?" for s in servers) + "\n")
            lat += (f"set title 'Latency, {name} ({c} connections)'\nset ylabel 'ms'\nset style data histogram\n"
                    "set style histogram cluster gap 1\nset style fill solid 0.9 border -1\nset yrange [0:*]\n")
            lat += "plot " + ", \\\n     ".join(
                f"'{dat}' using {i + 2}:xtic(1) title '{s}' lc rgb '{COLORS.get(s, '#777777')}'"
                for i, s in enumerate(servers)) + "\n"
        lat += "unset multiplot\n"
        scripts["latency"] = lat
        # latency distribution: percentile on a "nines" axis, one panel per endpoint
        dist = gp_head(os.path.join(res, "latency-distribution.png"), 1200, 800)
        dist += "set multiplot layout 2,3\nset logscale y\nset key inside left top font ',8'\n"
        dist += "set xtics ('50%%' 0.301, '75%%' 0.602, '90%%' 1, '99%%' 2, '99.9%%' 3, '99.99%%' 4)\n"
        dist += "set xrange [0.25:4.1]\nset ylabel 'ms'\n"
        pcts = [("p50", 50), ("p75", 75), ("p90", 90), ("p99", 99), ("p999", 99.9), ("p9999", 99.99)]
        import math
        for e in endpoints:
            dat = os.path.join(pdir, f"dist-{e}.dat")
            with open(dat, "w") as f:
                f.write("# nines " + " ".join(servers) + "\n")
                for k, p in pcts:
                    x = -math.log10(1 - p / 100)
                    f.write(f"{x:.4f} " + " ".join(f"{g(s, e, k):.4g}" if g(s, e, k) else "?" for s in servers) + "\n")
            dist += f"set title 'Latency distribution: {PATHS[e]} ({c} conns)'\n"
            dist += "plot " + ", \\\n     ".join(
                f"'{dat}' using 1:{i + 2} with linespoints title '{s}' lc rgb '{COLORS.get(s, '#777777')}' lw 2 pt 7 ps 0.6"
                for i, s in enumerate(servers)) + "\n"
        dist += "unset multiplot\n"
        scripts["latency-distribution"] = dist
        # req/s against connections, one panel per endpoint
        if len(conns) > 1:
            rc = gp_head(os.path.join(res, "requests-by-connections.png"), 1200, 800)
            rc += "set multiplot layout 2,3\nset key inside right top font ',8'\nset ylabel 'req/s'\nset yrange [0:*]\n"
            rc += "set xtics (" + ", ".join(f"'{c2}' {i}" for i, c2 in enumerate(conns)) + ")\n"
            rc += f"set xrange [-0.3:{len(conns) - 0.7}]\nset xlabel 'connections'\n"
            for e in endpoints:
                dat = os.path.join(pdir, f"byconns-{e}.dat")
                with open(dat, "w") as f:
                    f.write("# i " + " ".join(servers) + "\n")
                    for i, c2 in enumerate(conns):
                        f.write(f"{i} " + " ".join(f"{S[(s, 1, e, c2)]['rps']:.0f}" if (s, 1, e, c2) in S else "?"
                                                   for s in servers) + "\n")
                rc += f"set title 'Requests per second: {PATHS[e]}'\n"
                rc += "plot " + ", \\\n     ".join(
                    f"'{dat}' using 1:{i + 2} with linespoints title '{s}' lc rgb '{COLORS.get(s, '#777777')}' lw 2 pt 7 ps 0.6"
                    for i, s in enumerate(servers)) + "\n"
            rc += "unset multiplot\n"
            scripts["requests-by-connections"] = rc
        # HTTP codes over every run
        dat = os.path.join(pdir, "codes.dat")
        tot_n2 = sum(S[k]["non2xx"] for k in S)
        tot_se = sum(S[k]["sockerr"] for k in S)
        with open(dat, "w") as f:
            f.write("# server 2xx non-2xx socket-errors\n")
            for s in servers:
                ks = [k for k in S if k[0] == s]
                tot = sum(S[k]["requests"] for k in ks)
                n2 = sum(S[k]["non2xx"] for k in ks)
                se = sum(S[k]["sockerr"] for k in ks)
                f.write(f"{s} " + " ".join(f"{v:.0f}" if v > 0 else "?" for v in (tot - n2, n2, se)) + "\n")
        cg = gp_head(os.path.join(res, "codes.png"), 1000, 500)
        cg += (f"set title 'HTTP answers over every run (log scale, 0 not drawn): all non-2xx {tot_n2:.0f}, "
               f"all socket errors {tot_se:.0f}'\nset xtics rotate by -25\n"
               "set style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.9 border -1\n"
               "set logscale y\nset ylabel 'count'\nset yrange [0.8:*]\n"
               f"plot '{dat}' using 2:xtic(1) title '2xx' lc rgb '#2ca02c', "
               f"'' using 3 title 'non-2xx' lc rgb '#ff7f0e', "
               f"'' using 4 title 'socket errors' lc rgb '#d62728'\n")
        scripts["codes"] = cg
    for name, gp in scripts.items():
        path = os.path.join(pdir, name + ".gp")
        with open(path, "w") as f:
            f.write(gp)
        r = subprocess.run(["gnuplot", path], capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(f"report: gnuplot {name}: {r.stderr}\n")
        else:
            made.append(name + ".png")
    return made


def main():
    res = sys.argv[1]
    rows = load(os.path.join(res, "runs.tsv"))
    S = summarize(rows)
    servers = ordered({k[0] for k in S})
    conns = sorted({k[3] for k in S})
    endpoints = [e for e in ENDPOINTS if any(k[2] == e for k in S)]
    multicore = any(k[1] > 1 for k in S)
    lines = ["# canal benchmark results\n", "```"]
    with open(os.path.join(res, "meta.txt")) as f:
        lines.append(f.read().rstrip())
    lines.append("```\n")
    vpath = os.path.join(res, "verify.tsv")
    if os.path.exists(vpath):
        per = collections.OrderedDict()
        diffs = []
        with open(vpath) as f:
            for line in f:
                v = line.rstrip("\n").split("\t")
                per.setdefault(v[0], collections.Counter())[v[2]] += 1
                if v[2] != "same":
                    diffs.append(v)
        lines.append("## Byte-for-byte check against canal-demo (router mode)\n")
        lines.append("| server | URLs checked | same status, content type and body | same status and body, "
                     "other content type | status or body differ |")
        lines.append("|---|---:|---:|---:|---:|")
        for s, c in per.items():
            lines.append(f"| {s} | {sum(c.values())} | {c['same']} | {c['content-type']} | {c['DIFFERS']} |")
        lines.append("")
        if diffs:
            lines.append("Differences. A different status or body on a benchmark URL leaves a server out; so does "
                         "any difference for the baseline and canal's controller mode. nginx serves only "
                         "/home/plaintext and /home/json.\n")
            for v in diffs:
                lines.append(f"- {v[0]} `{v[1]}` ({v[2]}): {v[3]}; {v[4]}")
            lines.append("")
    epath = os.path.join(res, "events.tsv")
    if os.path.exists(epath):
        lines.append("## Events\n")
        with open(epath) as f:
            for line in f:
                lines.append("- " + line.strip().replace("\t", " "))
        lines.append("")
    if multicore:
        multicore_md(S, servers, conns, endpoints, lines)
    else:
        single_core_md(S, servers, conns, endpoints, lines)
    made = charts(S, res, servers, conns, endpoints, multicore)
    if made:
        lines.append("## Charts\n")
        for m in made:
            lines.append(f"![{m[:-4]}]({m})\n")
    with open(os.path.join(res, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
