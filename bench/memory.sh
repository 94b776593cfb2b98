#!/usr/bin/env bash
# Idle memory of `lifeline daemon` with the embedded defaults (every monitor
# and sink `lifeline config show` lists), as a desktop runs it: a private session
# bus, one tmux server, a check server the probe reaches (only the URL points
# at the lab). After the first probe and a warm-up (MEMORY_WARMUP seconds,
# default 40: a second probe has run), it prints
#   - VmRSS, RssAnon, RssFile (/proc/PID/status) and Pss, Pss_Anon, Pss_File
#     (/proc/PID/smaps_rollup);
#   - where the resident pages are: /proc/PID/smaps summed per mapped file (the
#     daemon's own executable per part: code, read-only data, relocated data),
#     and per kind of anonymous mapping, largest first (MEMORY_TOP rows, default 25).
# Goal: VmRSS ≤ 16 MB.
#
# MEMORY_NO_PROBE=1 leaves the probe out of the defaults; MEMORY_HTTPS=1 points it at
# an HTTPS check server in the lab instead (a certificate only the lab's namespace trusts).
#
# MEMORY_CODE=1 also prints the executable's resident code per origin (Swift
# standard library, runtime, each module: bench/lib/resident-code.py);
# MEMORY_CODE_SYMBOLS=FILE writes the names of the functions on those pages
# (scripts/hot-code-order.sh uses it).
#
# MEMORY_CACHE=cold (the default) first drops lifeline-daemon's pages from the
# page cache, as after a boot: the daemon starts at login and nothing else maps
# its executable, so its pages come from disk. MEMORY_CACHE=warm keeps them
# cached (as right after a build, or a restart). It also prints how long the
# daemon took from its start to the first "online".
#
# Needs root, ip, python3, dbus-daemon, tmux. Uses .build/release/lifeline
# (built by `make bench`), or $LIFELINE_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/lab.sh
bin=${LIFELINE_BIN:-$PWD/.build/release/lifeline}
warmup=${MEMORY_WARMUP:-40}
cache=${MEMORY_CACHE:-cold}
top=${MEMORY_TOP:-25}
if [ ! -x "$bin" ]; then
    make -s release
fi
for tool in ip dbus-daemon tmux python3; do
    command -v "$tool" >/dev/null || { echo "memory bench: needs $tool; skipped"; exit 0; }
done
if [ "$(id -u)" != 0 ]; then echo "memory bench: needs root (network namespaces); skipped"; exit 0; fi

lab_init
tag=$lab_tag
client=llmc-$tag upstream=llmu-$tag
gw=10.78.0.1 me=10.78.0.2
lab_cleanup() { [ -S "$work/tmux/tmux-0/bench" ] && tmux -S "$work/tmux/tmux-0/bench" kill-server 2>/dev/null; }

lab_pair "$client" "$upstream" "$gw" "$me"

lab_check_server "$gw" "$upstream"

lab_session_bus
mkdir -p "$work/tmux"
export TMUX_TMPDIR=$work/tmux
tmux -L bench new-session -d -x 80 -y 10 "sleep infinity"

# The embedded defaults (`lifeline config show`), with the check URL in the lab.
mkdir -p "$work/config" "$work/run" "$work/state"
lab_default_config "$gw" > "$work/config/config.toml"
# MEMORY_NO_PROBE=1: the same without the probe's table (each table is a paragraph), a daemon
# that never needs libcurl.
if [ -n "${MEMORY_HTTPS:-}" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -keyout "$work/check.key" -out "$work/check.pem" \
        -subj "/CN=$gw" -addext "subjectAltName=IP:$gw" -addext basicConstraints=critical,CA:FALSE 2>/dev/null
    # `ip netns exec` mounts /etc/netns/NAME/ssl over /etc/ssl: the daemon trusts this certificate alone.
    mkdir -p "/etc/netns/$client/ssl/certs"
    cp "$work/check.pem" "/etc/netns/$client/ssl/certs/ca-certificates.crt"
    cp "$work/check.pem" "/etc/netns/$client/ssl/certs/$(openssl x509 -hash -noout -in "$work/check.pem").0"
    ip netns exec "$upstream" python3 Tests/IntegrationTests/Resources/tls_check_server.py \
        "$work/check.pem" "$work/check.key" "$gw" 8443 "$work/tls-requests.log" > "$work/tls.out" &
    pids+=($!)
    for _ in $(seq 500); do grep -q ready "$work/tls.out" 2>/dev/null && break; sleep 0.01; done
    sed -i "s|^url = \"http://$gw:8080/|url = \"https://$gw:8443/|" "$work/config/config.toml"
fi
if [ -n "${MEMORY_NO_PROBE:-}" ]; then
    awk -v RS= -v ORS='\n\n' '!/\nkind = "probe"\n/' "$work/config/config.toml" > "$work/config/no-probe.toml"
    mv "$work/config/no-probe.toml" "$work/config/config.toml"
fi
sync  # the freshly linked binaries' pages start clean
if [ "$cache" = cold ]; then
    # Drops the file's cached pages that no process maps (dd's nocache: POSIX_FADV_DONTNEED).
    dd of="$(dirname "$bin")/lifeline-daemon" oflag=nocache conv=notrunc,fdatasync count=0 status=none
fi
XDG_RUNTIME_DIR=$work/run XDG_STATE_HOME=$work/state \
    ip netns exec "$client" "$bin" daemon --config "$work/config/config.toml" 2> "$work/daemon.log" &
daemon=$!
pids+=("$daemon")

start=$(now_ms)
until [ "$(state)" = online ]; do
    if (( $(now_ms) - start > 20000 )); then echo "daemon still '$(state)' after 20 s, expected online"; tail -20 "$work/daemon.log"; exit 1; fi
    sleep 0.01
done
echo "-- online $(( $(now_ms) - start )) ms after the start (page cache: $cache)"
sleep "$warmup"

exe=$(readlink "/proc/$daemon/exe")
echo "-- lifeline daemon (pid $daemon, $exe), online, $warmup s after the first probe"
awk '/^VmRSS|^RssAnon|^RssFile|^Threads/ { printf "   %-10s %8s %s\n", $1, $2, $3 }' "/proc/$daemon/status"
awk '/^Pss:|^Pss_Anon:|^Pss_File:/ { printf "   %-10s %8s kB\n", $1, $2 }' "/proc/$daemon/smaps_rollup"

# One row per mapped file (the executable per permission: r-x code, r-- read-only
# data, rw- relocated and writable data) and per kind of anonymous mapping.
echo "   where the resident pages are (kB; Anonymous = private pages the process wrote):"
awk -v exe="$exe" -v top="$top" '
    /^[0-9a-f]+-[0-9a-f]+ / {
        perms = $2; path = (NF >= 6 ? $6 : "")
        if (path == exe) name = "executable " substr(perms, 1, 3)
        else if (path == "") name = "anonymous (heap arenas, thread stacks)"
        else if (path ~ /^\[/) name = path
        else { n = split(path, part, "/"); name = part[n] }
        next
    }
    /^Rss:/ { rss[name] += $2; total_rss += $2 }
    /^Pss:/ { pss[name] += $2; total_pss += $2 }
    /^Anonymous:/ { anon[name] += $2; total_anon += $2 }
    END {
        for (name in rss) if (rss[name] > 0) printf "%d\t%d\t%d\t%s\n", rss[name], pss[name], anon[name], name | "sort -rn > /dev/stderr"
        close("sort -rn > /dev/stderr")
        printf "TOTAL\t%d\t%d\t%d\n", total_rss, total_pss, total_anon
    }' "/proc/$daemon/smaps" 2> "$work/rows" > "$work/total"
printf '   %8s %8s %9s  %s\n' Rss Pss Anonymous mapping
head -n "$top" "$work/rows" | awk -F'\t' '{ printf "   %8d %8d %9d  %s\n", $1, $2, $3, $4 }'
rest=$(tail -n +"$((top + 1))" "$work/rows" | awk -F'\t' '{ r += $1; p += $2; a += $3; n++ } END { if (n) printf "%d %d %d %d", r, p, a, n }')
[ -n "$rest" ] && awk -v rest="$rest" 'BEGIN { split(rest, v, " "); printf "   %8d %8d %9d  (%d more mappings)\n", v[1], v[2], v[3], v[4] }'
awk -F'\t' '{ printf "   %8d %8d %9d  all\n", $2, $3, $4 }' "$work/total"
if [ -n "${MEMORY_CODE:-}" ]; then
    echo "   the executable's resident code by where it comes from (/proc/PID/pagemap, symbols from nm):"
    python3 bench/lib/resident-code.py "$daemon" ${MEMORY_CODE_SYMBOLS:+"$MEMORY_CODE_SYMBOLS"} | sed 's/^/   /'
fi
