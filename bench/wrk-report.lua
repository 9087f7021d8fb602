-- SPDX-License-Identifier: MIT
-- wrk report for bench/run: one tab-separated line after the run, machine-readable.
-- It defines only done(), so wrk keeps its fast path (no per-request Lua).
--   RESULT duration_us requests bytes connect read write status timeout
--          p50 p75 p90 p99 p99.9 p99.99 mean max        (latencies in microseconds)
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d",
    summary.duration, summary.requests, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout))
  for _, p in ipairs({50, 75, 90, 99, 99.9, 99.99}) do
    io.write(string.format("\t%d", latency:percentile(p)))
  end
  io.write(string.format("\t%d\t%d\n", latency.mean, latency.max))
end
