#!/usr/bin/env bash
# Real Redis and NATS (JetStream) on loopback for the adapter test suites.
#
#   eval "$(bash scripts/test-servers.sh start)"   # starts both (no-op when already up), exports the URLs
#   bash scripts/test-servers.sh stop              # stops what `start` started (by pidfile)
#   bash scripts/test-servers.sh env               # prints the export lines only
#
# stdout carries only `export ...` lines (so `eval` is safe); progress goes to stderr.
# Redis runs with appendonly + appendfsync everysec: the persistence the turn
# buffer requires in production (see src/adapters/redis/redis-turn-buffer.ts).
# Ports, data dir overridable: MEMGATE_TEST_REDIS_PORT, MEMGATE_TEST_NATS_PORT,
# MEMGATE_TEST_NATS_MONITOR_PORT, MEMGATE_TEST_SERVERS_DIR.
set -euo pipefail

REDIS_PORT="${MEMGATE_TEST_REDIS_PORT:-6390}"
NATS_PORT="${MEMGATE_TEST_NATS_PORT:-4233}"
NATS_MON_PORT="${MEMGATE_TEST_NATS_MONITOR_PORT:-8233}"
BASE_DIR="${MEMGATE_TEST_SERVERS_DIR:-${TMPDIR:-/tmp}/memgate-test-servers}"
REDIS_DIR="$BASE_DIR/redis"
NATS_DIR="$BASE_DIR/nats"
REDIS_PID="$BASE_DIR/redis.pid"
NATS_PID="$BASE_DIR/nats.pid"
TIMEOUT_S=20

log() { printf 'test-servers: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# True when the pidfile names a live process.
alive() { [[ -s "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

redis_ready() { [[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == "PONG" ]]; }

# /healthz answers ok even without JetStream: /jsz naming the store dir proves JetStream is on.
nats_ready() { curl -fsS "http://127.0.0.1:$NATS_MON_PORT/jsz" 2>/dev/null | grep -q store_dir; }

wait_for() {
  local what="$1" check="$2" i
  for ((i = 0; i < TIMEOUT_S * 10; i++)); do
    if "$check"; then return 0; fi
    sleep 0.1
  done
  die "$what not ready after ${TIMEOUT_S}s (logs in $BASE_DIR)"
}

print_env() {
  echo "export MEMGATE_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
  echo "export MEMGATE_TEST_NATS_URL=nats://127.0.0.1:$NATS_PORT"
}

start_redis() {
  command -v redis-server >/dev/null || die "redis-server not installed (apt-get install -y redis-server)"
  if alive "$REDIS_PID" || redis_ready; then
    log "redis already running on $REDIS_PORT"
    return
  fi
  mkdir -p "$REDIS_DIR"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --appendonly yes --appendfsync everysec \
    --dir "$REDIS_DIR" --daemonize yes --pidfile "$REDIS_PID" --logfile "$BASE_DIR/redis.log" \
    --save '' >/dev/null
  wait_for redis redis_ready
  log "redis started on $REDIS_PORT (data $REDIS_DIR)"
}

start_nats() {
  command -v nats-server >/dev/null || die "nats-server not installed (apt-get install -y nats-server)"
  if alive "$NATS_PID" || nats_ready; then
    log "nats already running on $NATS_PORT"
    return
  fi
  mkdir -p "$NATS_DIR"
  # setsid + nohup: the server must outlive this script and the caller's job control.
  setsid nohup nats-server -js -a 127.0.0.1 -p "$NATS_PORT" -m "$NATS_MON_PORT" -sd "$NATS_DIR" \
    -P "$NATS_PID" >"$BASE_DIR/nats.log" 2>&1 </dev/null &
  wait_for nats nats_ready
  log "nats started on $NATS_PORT (monitor $NATS_MON_PORT, store $NATS_DIR)"
}

stop_one() {
  local name="$1" pidfile="$2" pid i
  if ! alive "$pidfile"; then
    log "$name not running (no live pidfile)"
    rm -f "$pidfile"
    return
  fi
  pid="$(cat "$pidfile")"
  kill "$pid"
  for ((i = 0; i < TIMEOUT_S * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && die "$name (pid $pid) did not stop"
  rm -f "$pidfile"
  log "$name stopped"
}

case "${1:-}" in
  start)
    mkdir -p "$BASE_DIR"
    start_redis
    start_nats
    print_env
    ;;
  stop)
    stop_one redis "$REDIS_PID"
    stop_one nats "$NATS_PID"
    ;;
  env)
    print_env
    ;;
  *)
    echo "usage: $0 start|stop|env" >&2
    exit 2
    ;;
esac
