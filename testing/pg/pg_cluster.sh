#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests: Debian's postgresql package, a
# data directory under DIR, listening on 127.0.0.1 only (and a socket in
# DIR), trust authentication for the one database "ferry".
#
#   pg_cluster.sh start DIR   creates and starts it; prints a libpq
#                             connection string on stdout
#   pg_cluster.sh stop DIR    stops it (fast shutdown); DIR is left to the caller
#   pg_cluster.sh restart DIR stops (if running) and starts it on the same port
#
# PostgreSQL refuses to run as root: as root the server runs as `nobody`
# (DIR is handed to it). Exits 77 (skip) when PostgreSQL is not installed,
# 1 under FERRY_REQUIRE_PEERS=1.
set -euo pipefail
cmd=${1:?usage: pg_cluster.sh start|stop|restart DIR}
dir=${2:?usage: pg_cluster.sh start|stop|restart DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "pg_cluster: PostgreSQL is not installed (scripts/setup.sh test installs it)" >&2
  # CI (FERRY_REQUIRE_PEERS=1) fails instead of skipping.
  [ "${FERRY_REQUIRE_PEERS:-0}" = 1 ] && exit 1
  exit 77
fi
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
data=$dir/data
conninfo() { echo "host=127.0.0.1 port=$(cat "$dir/port") dbname=ferry user=ferry connect_timeout=5"; }
start_server() {
  as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $(cat "$dir/port") -c unix_socket_directories=$dir/sock" \
    start >/dev/null
}
case "$cmd" in
  start)
    mkdir -p "$dir/sock"
    if [ "$(id -u)" = 0 ]; then chown -R nobody: "$dir"; chmod 755 "$dir"; fi
    as_owner "$bin/initdb" -D "$data" -U ferry --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # A free loopback port: bind to port 0 and read what the kernel chose.
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    echo "$port" > "$dir/port"
    # Tests want a fast, small server, not a durable one.
    printf 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\nmax_connections = 100\n' \
      | as_owner tee -a "$data/postgresql.conf" >/dev/null
    start_server || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$bin/createdb" -h "$dir/sock" -p "$port" -U ferry ferry
    conninfo
    ;;
  stop)
    [ -f "$data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
    ;;
  restart)
    # Also starts a cluster that `stop` left down (an outage that ends).
    [ -f "$data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
    start_server
    conninfo
    ;;
  *) echo "pg_cluster: unknown command $cmd" >&2; exit 2 ;;
esac
