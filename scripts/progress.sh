# Progress lines for the long steps of scripts/build.sh, run.sh and
# test.sh (sourced, not run): a cold first build compiles hundreds of
# packages and would otherwise print nothing for minutes.

# Measured with an empty GOCACHE (modules already downloaded) on the
# project's 2-core machine: 2.5 min with it idle, 9 min at load 5-20.
# README.md quotes the same.
COLD_BUILD_NOTE="a cold first build compiles ~580 packages: ~3 min on 2 idle cores, ~9 on busy ones; later builds take seconds"

# count_packages reads `go build -v` output (the import path of each
# package it compiles, one a line) and prints a line every 15 s with the
# count so far; any other line (a compile error) is passed through.
count_packages() {
  local n=0 last=$SECONDS line
  while IFS= read -r line; do
    if [[ $line =~ ^[A-Za-z0-9._~/-]+$ ]]; then
      n=$((n + 1))
      if ((SECONDS - last >= 15)); then
        echo "   … still compiling: $n packages so far"
        last=$SECONDS
      fi
    else
      printf '%s\n' "$line"
    fi
  done
  if ((n > 0)); then echo "   compiled $n packages"; fi
}

# compile runs `go build -v ARGS...` with count_packages on its output.
compile() {
  go build -v "$@" 2>&1 | count_packages
  return "${PIPESTATUS[0]}"
}

# heartbeat LABEL COMMAND...: runs COMMAND, printing "… LABEL: still
# running (N min)" every minute until it ends; returns its status.
heartbeat() {
  local label=$1 start=$SECONDS hb rc=0
  shift
  (while sleep 60; do echo "   … $label: still running ($(((SECONDS - start) / 60)) min)"; done) &
  hb=$!
  "$@" || rc=$?
  kill "$hb" 2>/dev/null
  wait "$hb" 2>/dev/null || true
  return "$rc"
}
