#!/usr/bin/env bash
# Re-make docs/adk-web.png: `adk web` answers a PIPL question with the configured model (default: the embedded
# local LLM), then headless Chromium renders the Dev UI on that session. Needs Debian's chromium and
# fonts-noto-cjk (apt-get install chromium fonts-noto-cjk). Usage: bash docs/screenshot.sh ["question"]
set -euo pipefail
cd "$(dirname "$0")/.."
question=${1:-我家孩子12岁，App收集他的信息要家长同意吗？}
port=8765
tmp=$(mktemp -d)
# A throw-away HOME whose ~/.adk/config.json says "telemetry: false": the Dev UI then skips its first-run consent
# dialog, and the user's own ADK settings are left alone.
export HOME="$tmp/home"
.venv/bin/adk telemetry disable >/dev/null
.venv/bin/adk web --host 127.0.0.1 --port $port --session_service_uri "sqlite:///$tmp/s.db" . >"$tmp/web.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 60); do curl -sf "http://127.0.0.1:$port/list-apps" >/dev/null && break; sleep 1; done
sid=$(curl -sf -X POST "http://127.0.0.1:$port/apps/agentic_rag/users/user/sessions" -H 'content-type: application/json' -d '{}' | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["id"])')
body=$(.venv/bin/python -c 'import json,sys; print(json.dumps({"appName":"agentic_rag","userId":"user","sessionId":sys.argv[1],"newMessage":{"role":"user","parts":[{"text":sys.argv[2]}]}}))' "$sid" "$question")
curl -sf -X POST "http://127.0.0.1:$port/run" -H 'content-type: application/json' -d "$body" >"$tmp/run.json"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$tmp/chrome" --hide-scrollbars \
  --window-size=1500,1900 --virtual-time-budget=15000 --screenshot=docs/adk-web.png \
  "http://127.0.0.1:$port/dev-ui/?app=agentic_rag&session=$sid&userId=user" 2>/dev/null
echo "docs/adk-web.png (session $sid)"
