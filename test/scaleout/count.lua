-- SPDX-License-Identifier: MIT
-- wrk script for test/scaleout/run.sh: counts every answer that is not 2xx (wrk's own
-- summary counts only >= 400 as errors) and prints one machine-readable line at the end:
--   SCALEOUT requests non2xx connect read write timeout
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  non2xx = 0
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
  end
end

function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do
    bad = bad + t:get("non2xx")
  end
  local e = summary.errors
  io.write(string.format("SCALEOUT %d %d %d %d %d %d\n", summary.requests, bad,
    e.connect, e.read, e.write, e.timeout))
end
