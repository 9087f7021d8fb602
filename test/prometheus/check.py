# SPDX-License-Identifier: MIT
"""Reads a Prometheus text-format scrape on stdin and parses it with the official Python
client's parser (Debian's python3-prometheus-client), then prints one line per sample,
'name{label="value",...} number', labels in the order they came. Exits 1 with the reason when
the text does not parse, a family has no TYPE the parser knows, or a histogram is inconsistent
(buckets not cumulative, +Inf bucket not equal to _count)."""
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = sys.stdin.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and others on bad lines
        print(f"parse error: {e}", file=sys.stderr)
        return 1
    for f in families:
        if f.type == "unknown":
            print(f"{f.name}: no TYPE line", file=sys.stderr)
            return 1
        buckets = {}
        for s in f.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in s.labels.items())
            print(f"{s.name}{{{labels}}} {s.value:g}" if labels else f"{s.name} {s.value:g}")
            if f.type == "histogram":
                key = tuple((k, v) for k, v in s.labels.items() if k != "le")
                b = buckets.setdefault(key, {"last": -1, "inf": None, "count": None})
                if s.name.endswith("_bucket"):
                    if s.value < b["last"]:
                        print(f"{f.name}{key}: bucket le={s.labels['le']} goes down", file=sys.stderr)
                        return 1
                    b["last"] = s.value
                    if s.labels["le"] == "+Inf":
                        b["inf"] = s.value
                elif s.name.endswith("_count"):
                    b["count"] = s.value
        for key, b in buckets.items():
            if b["inf"] is None or b["inf"] != b["count"]:
                print(f"{f.name}{key}: +Inf {b['inf']} != count {b['count']}", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
