#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cuckoo-crowdsec-bouncer against a real CrowdSec Local API (Debian's
# crowdsec, run here as a plain process on a free port with its own sqlite
# database), the device emulated by cbn_fake_dev.so (LD_PRELOAD): its
# state file says what the set holds and until when.  Skipped when crowdsec
# and cscli are not installed.  kselftest-style output, "# Totals:" last.
set -u
DIR=@CBN_TESTDIR@
BOUNCER=$DIR/cuckoo-crowdsec-bouncer
FAKE=$DIR/cbn_fake_dev.so
pass=0 fail=0 skip=0 n=0

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"
	echo "# bouncer log:"; sed 's/^/#   /' "$T/bouncer.log" | tail -n 15
	echo "# set:"; sed 's/^/#   /' "$T/state" 2>/dev/null
}
totals() {
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	exit $((fail != 0))
}

echo "TAP version 13"
if ! command -v crowdsec >/dev/null || ! command -v cscli >/dev/null; then
	echo "ok 1 # SKIP crowdsec and cscli are not installed (apt-get install crowdsec)"
	skip=1
	totals
fi

T=$(mktemp -d /tmp/test_cbn_lapi.XXXXXX)
LAPI_PID='' BOUNCER_PID=''
cleanup() {
	[ -z "$BOUNCER_PID" ] || kill "$BOUNCER_PID" 2>/dev/null
	[ -z "$LAPI_PID" ] || kill "$LAPI_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/data" "$T/hub"
echo '{}' >"$T/hub/.index.json"
echo 'simulation: off' >"$T/simulation.yaml"
cat >"$T/profiles.yaml" <<PROFILE
name: default_ip_remediation
filters:
 - Alert.Remediation == true && Alert.GetScope() == "Ip"
decisions:
 - type: ban
   duration: 4h
on_success: break
PROFILE
cat >"$T/config.yaml" <<CONFIG
common:
  daemonize: false
  log_media: stdout
  log_level: info
  working_dir: .
config_paths:
  config_dir: $T/
  data_dir: $T/data/
  simulation_path: $T/simulation.yaml
  hub_dir: $T/hub/
  index_path: $T/hub/.index.json
  notification_dir: $T/notifications/
  plugin_dir: /usr/lib/crowdsec/plugins/
db_config:
  type: sqlite
  db_path: $T/data/crowdsec.db
  use_wal: false
api:
  client:
    credentials_path: $T/local_api_credentials.yaml
  server:
    log_level: info
    listen_uri: 127.0.0.1:$PORT
    profiles_path: $T/profiles.yaml
prometheus:
  enabled: false
CONFIG
: >"$T/local_api_credentials.yaml"
cs() { cscli -c "$T/config.yaml" "$@" >>"$T/cscli.log" 2>&1; }

start_lapi() {
	crowdsec -c "$T/config.yaml" -no-cs >>"$T/lapi.log" 2>&1 &
	LAPI_PID=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
		sleep 0.1
	done
	echo "# the Local API did not start:"; sed 's/^/#   /' "$T/lapi.log"
	return 1
}
stop_lapi() { kill "$LAPI_PID"; wait "$LAPI_PID" 2>/dev/null; LAPI_PID=; }

if ! cs machines add -a -f "$T/local_api_credentials.yaml" || ! start_lapi; then
	echo "not ok 1 Local API set up"; fail=1; totals
fi
KEY=$(cscli -c "$T/config.yaml" bouncers add cuckoo-bouncer -o raw 2>>"$T/cscli.log")

cat >"$T/bouncer.yaml" <<BOUNCER
# as crowdsec-firewall-bouncer's
api_url: http://127.0.0.1:$PORT/
api_key: $KEY
update_frequency: 1s
log_level: debug
set: crowdsec
device: $T/dev
BOUNCER
touch "$T/dev"

start_bouncer() {
	CBN_FAKE_STATE=$T/state CBN_FAKE_LOG=$T/fake.log LD_PRELOAD=$FAKE \
		"$BOUNCER" -c "${1:-$T/bouncer.yaml}" >>"$T/bouncer.log" 2>&1 &
	BOUNCER_PID=$!
}
stop_bouncer() {
	kill -"${1:-TERM}" "$BOUNCER_PID"
	wait "$BOUNCER_PID"
	local rc=$?
	BOUNCER_PID=
	return $rc
}

# Seconds PREFIX has left in the set (0: no timeout), or nothing.
left() {
	awk -v p="$1" -v now="$(date +%s)" \
		'$1 == "crowdsec" && $2 == p && ($3 == 0 || $3 > now) { print ($3 ? $3 - now : 0) }' \
		"$T/state" 2>/dev/null
}
has() { [ -n "$(left "$1")" ]; }
# Wait up to $1 seconds for the command after it to succeed.
within() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}
lines() { grep -c -- "$1" "$2" 2>/dev/null; }
# Is N within [LO, HI]?
between() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# 1: the start replaces the set with the active bans, the longer of two.
cs decisions add --ip 192.0.2.5 --duration 2m
cs decisions add --ip 192.0.2.5 --duration 10m
cs decisions add --range 198.51.100.0/24 --duration 3m
cs decisions add --ip 2001:db8::7 --duration 4m
cs decisions add --ip 192.0.2.66 --duration 5m --type captcha
# An entry of the set the Local API knows nothing of: the replace drops it.
printf 'crowdsec 203.0.113.99 0\n' >"$T/state"
start_bouncer
if within 10 has 192.0.2.5 && ! has 203.0.113.99 &&
   between "$(left 192.0.2.5)" 570 600 &&
   between "$(left 198.51.100.0/24)" 150 180 &&
   between "$(left 2001:db8::7)" 210 240 && ! has 192.0.2.66 &&
   [ "$(lines '^REPLACE crowdsec 3$' "$T/fake.log")" = 1 ] &&
   [ "$(lines '^SET_CREATE crowdsec' "$T/fake.log")" = 0 ]; then
	ok "start: the set replaced by the active bans, the longer of two decisions"
else
	not_ok "start: the set replaced by the active bans, the longer of two decisions"
fi

# 2: other decision types are reported once.
sleep 2
if [ "$(lines "type 'captcha' are not applied" "$T/bouncer.log")" = 1 ]; then
	ok "a type other than ban: skipped, reported once"
else
	not_ok "a type other than ban: skipped, reported once"
fi

# 3: a new ban comes in within the poll interval, with its duration.
cs decisions add --ip 192.0.2.20 --duration 1m
if within 10 has 192.0.2.20 && between "$(left 192.0.2.20)" 45 60 &&
   grep -q '^ADD crowdsec 192.0.2.20 [0-9]* 3$' "$T/fake.log"; then
	ok "decisions add --ip: added with its duration as timeout"
else
	not_ok "decisions add --ip: added with its duration as timeout"
fi

# 4: a shorter second decision does not shorten the entry; a longer one
# extends it.
cs decisions add --ip 192.0.2.20 --duration 30s
sleep 2.5
short=$(left 192.0.2.20)
cs decisions add --ip 192.0.2.20 --duration 20m
# shellcheck disable=SC2016 # expanded by eval, at each try
if between "$short" 35 60 && within 10 eval 'between "$(left 192.0.2.20)" 1180 1200'; then
	ok "two decisions for one address: the longer kept"
else
	not_ok "two decisions for one address: the longer kept (after the shorter: $short s)"
fi

# 5: an address banned again right after its ban ended stays banned,
# whatever the Local API repeats of the end.
cs decisions add --ip 192.0.2.50 --duration 2s
within 5 has 192.0.2.50
sleep 2
cs decisions add --ip 192.0.2.50 --duration 5m
sleep 4
if has 192.0.2.50 && between "$(left 192.0.2.50)" 280 300; then
	ok "banned again as its ban ends: kept"
else
	not_ok "banned again as its ban ends: kept"
fi

# 6: a deleted decision removes the address; a range comes and goes.
cs decisions add --range 203.0.113.0/25 --duration 2m
within 10 has 203.0.113.0/25
cs decisions delete --ip 192.0.2.5
cs decisions delete --range 203.0.113.0/25
# shellcheck disable=SC2016 # expanded by eval, at each try
if within 10 eval '! has 192.0.2.5 && ! has 203.0.113.0/25' &&
   has 192.0.2.20 && has 198.51.100.0/24; then
	ok "decisions delete --ip / --range: removed, the others stay"
else
	not_ok "decisions delete --ip / --range: removed, the others stay"
fi

# 7: a short ban is given its few seconds, and ends by its timeout.
cs decisions add --ip 192.0.2.30 --duration 5s
# shellcheck disable=SC2016 # expanded by eval, at each try
if within 5 has 192.0.2.30 && between "$(left 192.0.2.30)" 0 5 &&
   within 8 eval '! has 192.0.2.30'; then
	ok "a short decision: timeout of its few seconds"
else
	not_ok "a short decision: timeout of its few seconds"
fi

# 8: without the device, the set is left alone and the stream where it
# is; back, the set is replaced.
rm "$T/dev"
cs decisions add --ip 192.0.2.40 --duration 5m
sleep 3
missing=$(lines 'cuckoo_nf module not loaded' "$T/bouncer.log")
replaces=$(lines '^REPLACE' "$T/fake.log")
touch "$T/dev"
if [ "$missing" -ge 1 ] && [ "$replaces" = 1 ] && has 192.0.2.20 &&
   within 10 has 192.0.2.40 && [ "$(lines '^REPLACE' "$T/fake.log")" = 2 ]; then
	ok "device missing: logged, the set kept; back: replaced"
else
	not_ok "device missing: logged, the set kept; back: replaced"
fi

# 9: the Local API unreachable: logged, the set kept; back, a replace.
stop_lapi
sleep 3
down=$(lines "GET http://127.0.0.1:$PORT/v1/decisions/stream?startup=false: .*; the set keeps its entries" "$T/bouncer.log")
# shellcheck disable=SC2016 # expanded by eval, at each try
if [ "$down" -ge 1 ] && has 192.0.2.20 && has 192.0.2.40 && start_lapi &&
   within 10 eval '[ "$(lines "^REPLACE" "$T/fake.log")" = 3 ]' &&
   has 192.0.2.20 && has 192.0.2.40; then
	ok "Local API unreachable: logged, the set kept; back: replaced"
else
	not_ok "Local API unreachable: logged, the set kept; back: replaced"
fi

# 10: SIGTERM: a clean exit, the set stays; a restart replaces it.
stop_bouncer TERM
rc=$?
kept=$(left 192.0.2.20)
cs decisions delete --ip 192.0.2.40
start_bouncer
# shellcheck disable=SC2016 # expanded by eval, at each try
if [ "$rc" = 0 ] && [ -n "$kept" ] &&
   within 10 eval '[ "$(lines "^REPLACE" "$T/fake.log")" = 4 ]' &&
   has 192.0.2.20 && ! has 192.0.2.40; then
	ok "SIGTERM: exit 0, the set kept; restart: resynchronized"
else
	not_ok "SIGTERM: exit 0 ($rc), the set kept; restart: resynchronized"
fi
stop_bouncer INT

# 11: a key the Local API refuses: said, and retried.
sed "s/^api_key: .*/api_key: wrong/" "$T/bouncer.yaml" >"$T/wrong.yaml"
start_bouncer "$T/wrong.yaml"
if within 5 grep -q 'HTTP 403.*the Local API refused api_key' "$T/bouncer.log" &&
   has 192.0.2.20; then
	ok "a wrong api_key: HTTP 403 reported, the set kept"
else
	not_ok "a wrong api_key: HTTP 403 reported, the set kept"
fi
stop_bouncer

# 12: origins and scenario filters go to the Local API, which leaves out
# what they exclude: decisions of an origin left out never reach the set.
# cscli's decisions are of origin "cscli", scenario "manual 'ban' from".
in_set() {
	awk -v s="$1" -v p="$2" '$1 == s && $2 == p { f = 1 } END { exit !f }' \
		"$T/state" 2>/dev/null
}
replaced_more() { [ "$(lines "^REPLACE $1 " "$T/fake.log")" -gt "$2" ]; }
filtered() {	# filtered SET LINE...: a bouncer with LINEs into SET, once
	local set=$1 n
	shift
	{ grep -v '^set:' "$T/bouncer.yaml"; echo "set: $set"; printf '%s\n' "$@"; } \
		>"$T/filter.yaml"
	n=$(lines "^REPLACE $set " "$T/fake.log")
	start_bouncer "$T/filter.yaml"
	within 10 replaced_more "$set" "$n"
	stop_bouncer
}
filtered cs-cscli 'origins: [cscli]'
filtered cs-crowdsec 'origins:' '  - crowdsec' '  - CAPI'
filtered cs-manual 'scenarios_containing: [manual]'
filtered cs-notmanual 'scenarios_not_containing: [manual]'
if in_set cs-cscli 192.0.2.20 && in_set cs-manual 192.0.2.20 &&
   grep -q '^REPLACE cs-crowdsec 0$' "$T/fake.log" &&
   grep -q '^REPLACE cs-notmanual 0$' "$T/fake.log" &&
   ! in_set cs-crowdsec 192.0.2.20 && ! in_set cs-notmanual 192.0.2.20; then
	ok "origins, scenarios_containing, scenarios_not_containing: the Local API leaves out what they exclude"
else
	not_ok "origins, scenarios_containing, scenarios_not_containing: the Local API leaves out what they exclude"
	grep '^REPLACE' "$T/fake.log" | sed 's/^/# /'
fi

# 13: what the real Local API does not send on cue, from a scripted one
# (fake_lapi.py), polled every 200 ms; the calls the device got, in order.
d() {	# d ID SCOPE VALUE DURATION: a decision as the Local API writes it
	printf '{"duration":"%s","id":%s,"origin":"cscli","scenario":"t","scope":"%s","type":"ban","value":"%s"}' \
		"$4" "$1" "$2" "$3"
}
ans() {	# ans DELETED NEW: a stream answer, each a JSON list or null
	local body
	body=$(printf '{"deleted":%s,"new":%s}' "$1" "$2")
	printf '{"status":200,"body":%s}' "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$body")"
}
A=192.0.2.101 B=192.0.2.102 C=192.0.2.103 D=192.0.2.104
cat >"$T/answers.json" <<ANSWERS
[
 $(ans null "[$(d 1 Ip $A 5m), $(d 2 Ip $A 30s), $(d 3 Ip $B 1m)]"),
 $(ans null "[$(d 4 Ip $A 10s)]"),
 $(ans "[$(d 9 Ip $D -1s)]" "[$(d 5 Range 198.51.100.0/25 2m)]"),
 $(ans "[$(d 1 Ip $A -2s)]" null),
 $(ans "[$(d 5 Range 198.51.100.0/25 -1s)]" "[$(d 6 Ip $A 1h)]"),
 $(ans "[$(d 1 Ip $A -3s)]" null),
 {"status":200,"body":"{\"new\": [ oops"},
 $(ans null "[$(d 6 Ip $A 59m59s), $(d 7 Ip $C 1m)]"),
 {"status":500,"body":"{\"message\":\"database locked\"}\n"},
 $(ans null "[$(d 6 Ip $A 59m58s)]")
]
ANSWERS
python3 "$(dirname "$BOUNCER")/fake_lapi.py" "$T/answers.json" "$T/port" "$T/requests" &
FAKE_LAPI=$!
within 5 test -s "$T/port"
sed -e "s,^api_url: .*,api_url: http://127.0.0.1:$(cat "$T/port")," \
    -e 's/^update_frequency: .*/update_frequency: 200ms/' "$T/bouncer.yaml" >"$T/fake.yaml"
: >"$T/fake.log"
printf 'crowdsec 203.0.113.99 0\n' >"$T/state"
start_bouncer "$T/fake.yaml"
# Past the 11th request, the last replace is done.
# shellcheck disable=SC2016 # expanded by eval, at each try
within 15 eval '[ "$(wc -l <"$T/requests")" -ge 11 ]'
stop_bouncer
kill "$FAKE_LAPI"
calls=$(grep -E '^(ADD|DEL|REPLACE)' "$T/fake.log" | tr '\n' ';')
want="REPLACE crowdsec 2;DEL crowdsec $D;ADD crowdsec 198.51.100.0/25 120 3;"
want+="DEL crowdsec $A;DEL crowdsec 198.51.100.0/25;ADD crowdsec $A 3600 3;"
want+="REPLACE crowdsec 2;REPLACE crowdsec 1;"
starts=$(awk '{ printf "%s ", $1 }' "$T/requests" | cut -d' ' -f1-11)
want_starts="startup=true startup=false startup=false startup=false startup=false startup=false startup=false startup=true startup=false startup=true startup=false"
if [ "$calls" = "$want" ]; then
	ok "scripted answers: the longer of two kept, a repeated delete passed over, resync after bad JSON and HTTP 500"
else
	not_ok "scripted answers: the longer of two kept, a repeated delete passed over, resync after bad JSON and HTTP 500"
	echo "# device calls: $calls"
	echo "# expected:     $want"
fi
if [ "$starts" = "$want_starts" ] &&
   [ "$(cut -d' ' -f2 "$T/requests" | sort -u)" = "$KEY" ] &&
   [ "$(cut -d' ' -f3 "$T/requests" | sort -u)" = "cuckoo-crowdsec-bouncer/v$("$BOUNCER" -V | cut -d' ' -f2)" ] &&
   grep -q 'decision stream answer: not JSON' "$T/bouncer.log" &&
   grep -q 'HTTP 500 ({"message":"database locked"})' "$T/bouncer.log" &&
   between "$(left $A)" 3570 3600 && ! has 203.0.113.99; then
	ok "requests: startup=true first and after each failure, the key, the User-Agent"
else
	not_ok "requests: startup=true first and after each failure, the key, the User-Agent"
	echo "# requests:"; sed 's/^/#   /' "$T/requests"
fi

# 14: a firewall's key and a misspelt one are warnings naming their line;
# a bad value is an error naming its line and the key.
printf 'api_url: http://127.0.0.1:1/\napi_key: k\nmode: nftables\nupdte_frequency: 1s\n' >"$T/warn.yaml"
printf 'api_url: http://127.0.0.1:1/\napi_key: k\nupdate_frequency: 10\n' >"$T/bad.yaml"
out=$("$BOUNCER" -t -c "$T/warn.yaml" 2>&1)
rc=$?
bad=$("$BOUNCER" -t -c "$T/bad.yaml" 2>&1)
badrc=$?
if [ "$rc" = 0 ] && [[ $out == *"$T/warn.yaml:3: mode: a firewall's setting: not used"* ]] &&
   [[ $out == *"$T/warn.yaml:4: updte_frequency: unknown key, ignored (the nearest known key is update_frequency)"* ]] &&
   [ "$badrc" = 1 ] && [[ $bad == *"$T/bad.yaml:3: update_frequency: '10': a unit"* ]] &&
   "$BOUNCER" -t -c "$T/bouncer.yaml" >/dev/null; then
	ok "configuration: warnings and errors named with their line"
else
	not_ok "configuration: warnings and errors named with their line ($rc: $out; $badrc: $bad)"
fi

# 15: mTLS: the Local API with a tls: block (certificates made here), the
# bouncer authenticated by its client certificate's OU, no key.
# shellcheck source=cbn_certs.sh
source "$DIR/cbn_certs.sh"
stop_lapi
certs >"$T/openssl.log" 2>&1
# The same database; cscli's password login over HTTPS as well.
sed -e "/^    profiles_path:/a\\
    tls:\\
      cert_file: $T/server.pem\\
      key_file: $T/server.key\\
      ca_cert_path: $T/ca.pem\\
      client_verification: VerifyClientCertIfGiven\\
      bouncers_allowed_ou:\\
        - bouncer-ou" \
    -e "/^    credentials_path:/a\\
    insecure_skip_verify: true" "$T/config.yaml" >"$T/config-tls.yaml"
sed -i "s,http://127.0.0.1:$PORT,https://127.0.0.1:$PORT," "$T/local_api_credentials.yaml"
crowdsec -c "$T/config-tls.yaml" -no-cs >>"$T/lapi.log" 2>&1 &
LAPI_PID=$!
within 10 curl -sk -o /dev/null "https://127.0.0.1:$PORT/"
cat >"$T/mtls.yaml" <<BOUNCER
api_url: https://127.0.0.1:$PORT/
cert_path: $T/client.pem
key_path: $T/client.key
ca_cert_path: $T/ca.pem
update_frequency: 1s
log_level: debug
set: cs-mtls
device: $T/dev
BOUNCER
n0=$(wc -l <"$T/bouncer.log")
start_bouncer "$T/mtls.yaml"
cscli -c "$T/config-tls.yaml" decisions add --ip 192.0.2.88 --duration 5m >>"$T/cscli.log" 2>&1
if within 15 in_set cs-mtls 192.0.2.88 && grep -q 'set cs-mtls replaced' "$T/bouncer.log" &&
   ! tail -n +$((n0 + 1)) "$T/bouncer.log" | grep -q 'error:' &&
   grep -q 'Creating bouncer cuckoo-bouncer@127.0.0.1' "$T/lapi.log"; then
	ok "mTLS against crowdsec's Local API: the client certificate's OU let in, a ban applied"
else
	not_ok "mTLS against crowdsec's Local API: the client certificate's OU let in, a ban applied"
	echo "# Local API:"; tail -n 15 "$T/lapi.log" | sed 's/^/#   /'
	echo "# cscli:"; tail -n 5 "$T/cscli.log" | sed 's/^/#   /'
fi
stop_bouncer
totals
