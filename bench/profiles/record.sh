#!/usr/bin/env bash
# Flame graphs of the TA, the executor (committed rule) and the validator (gonkad) while
# bench_agent_chain.py --executor loads the committed way alone: py-spy, SECONDS s each, all at once.
#   flock /tmp/gonka-bench.lock bench/profiles/record.sh TAG [SECONDS]
set -euo pipefail
tag=$1; seconds=${2:-25}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
log=$(mktemp)
PYTHONPATH=$root "$root/.venv/bin/python" "$root/bench/bench_agent_chain.py" --executor \
  --ways ta_chain_executor_committed --requests 20 --warm 20 --seconds $((seconds + 15)) --rounds $(((seconds + 15) / 5)) \
  >"$here/$tag-bench.json" 2>"$log" &
bench=$!
until grep -q "^throughput" "$log"; do sleep 0.5; kill -0 $bench; done
sleep 3
ta=$(pgrep -f -- "--role chain-ta" | head -1)
executor=$(pgrep -f -- "--role executor .* committed$" | head -1)
validator=$(pgrep -f -- "-m gonkad start --home" | head -1)
for name in ta executor validator; do
  "$root/.venv/bin/py-spy" record --nonblocking --rate 200 --duration "$seconds" -f flamegraph \
    -o "$here/$tag-$name.svg" --pid "${!name}" >/dev/null 2>&1 &
done
rc=0; wait $bench || rc=$?
cp "$log" "$here/$tag-bench.log"
rm -f "$log"
exit $rc
