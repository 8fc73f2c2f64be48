#!/usr/bin/env bash
# Short fuzz runs of every parser and gate. FUZZTIME sets the manifest
# parser's time (the issue asks for about 20 s); FUZZTIME_OTHERS the rest's:
# 3 s each, as 44 targets at 5 s took ~6 of CI's 25 minutes (each run's
# seed corpus always runs whole; longer runs: FUZZTIME_OTHERS=1m).
set -euo pipefail
cd "$(dirname "$0")/.."
main_t="${FUZZTIME:-20s}"
t="${FUZZTIME_OTHERS:-3s}"

# Go's fuzz runner now and then fails a run with a bare "context deadline
# exceeded" when -fuzztime ends while a worker is busy (on this VM its
# workers sometimes stall for seconds); no input failed and none was
# written. Such a run is repeated, up to twice; any real failure (a
# "Failing input written" line) fails the script at once.
run() { # time package target
  local out attempt
  for attempt in 1 2 3; do
    if out=$(go test -run '^$' -fuzz "^$3\$" -fuzztime "$1" "$2" 2>&1); then
      echo "$out"
      return 0
    fi
    echo "$out"
    if ! grep -q "context deadline exceeded" <<<"$out" || grep -q "Failing input written" <<<"$out"; then
      return 1
    fi
    echo "fuzz.sh: $3 stopped on the fuzz runner's deadline, not on an input (attempt $attempt of 3)"
  done
  return 1
}
run "$main_t" ./manifest FuzzParse
run "$t" ./manifest FuzzParseVersion
run "$t" ./ipc FuzzMatchers
run "$t" ./ipc FuzzPatternsOverlap
run "$t" ./ipc FuzzValidate
run "$t" ./ipc FuzzDecodePayload
run "$t" ./ipc FuzzToolDefinitionFastPath
run "$t" ./ipc FuzzMemberEquals
run "$t" ./ipc FuzzToolParts
run "$t" ./ipc FuzzElicitSchema
run "$t" ./internal/gate FuzzFSCheck
run "$t" ./internal/egress FuzzNormalizeHost
run "$t" ./internal/egress FuzzCheckAddr
run "$t" ./internal/dispatch FuzzACL
run "$t" ./internal/jsonscan FuzzValidJSON
run "$t" ./internal/jsonscan FuzzPlainPrefix
run "$t" ./internal/jsonscan FuzzAppendString
run "$t" ./internal/config FuzzParse
run "$t" ./internal/jsonscan FuzzScanObject
run "$t" ./ipc FuzzToolCodec
run "$t" ./internal/jsonscan FuzzDecodeStrings
run "$t" ./internal/jsonscan FuzzLoneSurrogate
run "$t" ./ipc FuzzGuestBytes
run "$t" ./ipc FuzzParseCancelRequest
run "$t" ./sdk FuzzFlatArgs
run "$t" ./internal/engine/wasm FuzzMergeDataSegments
run "$t" ./ipc FuzzParseTraceparent
run "$t" ./internal/telemetry FuzzScan
run "$t" ./capsules/shell FuzzDecide
run "$t" ./internal/sandbox FuzzPolicyNeverReachesTheHome
run "$t" ./internal/bus/natsbus FuzzDecodeAbandoned
run "$t" ./internal/bus/natsbus FuzzDecode
run "$t" ./internal/engine/mcp FuzzParseScopeChallenge
run "$t" ./internal/bus/natsbus FuzzParseSubject
run "$t" ./internal/bus/natsbus FuzzMapPattern
run "$t" ./internal/skillmd FuzzParseFrontmatter
run "$t" ./capsules/hooks FuzzDecide
run "$t" ./capsules/hooks FuzzWorkspaceHooks
run "$t" ./internal/audit FuzzDecodeLine
run "$t" ./internal/caps FuzzDecode
run "$t" ./internal/capsulepack FuzzRead
run "$t" ./internal/capsuleoci FuzzParseRef
run "$t" ./internal/capsuleoci FuzzArtifactLayer
run "$t" ./internal/distro FuzzReadBundle
run "$t" ./internal/chatui FuzzMarkdownRender
run "$t" ./internal/webview FuzzAnswerDoc
run "$t" ./internal/engine/mcp FuzzSamplingRequest
run "$t" ./internal/mcpserve FuzzCheckURI
run "$t" ./internal/mcpserve FuzzCheckTemplate
run "$t" ./internal/sessionmcp FuzzCheck
