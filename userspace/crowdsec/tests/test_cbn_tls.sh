#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cuckoo-crowdsec-bouncer against a scripted Local API (fake_lapi.py) over
# HTTPS that requires a client certificate, as crowdsec's with a tls:
# block: the certificates made here with openssl, the device emulated by
# cbn_fake_dev.so.  What the requests carry (the stream filters as query
# parameters, the certificate in place of a key), what ipv6_ban_prefix
# makes of the answers, and log_mode: file with the module missing.  No
# crowdsec needed: part of make unit.
# kselftest-style output, "# Totals:" last.
set -u
DIR=@CBN_TESTDIR@
BOUNCER=$DIR/cuckoo-crowdsec-bouncer
FAKE=$DIR/cbn_fake_dev.so
pass=0 fail=0 skip=0 n=0

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"
	echo "# bouncer log:"; sed 's/^/#   /' "$T/bouncer.log" | tail -n 15
	echo "# requests:"; sed 's/^/#   /' "$T/requests" 2>/dev/null
	echo "# device calls:"; sed 's/^/#   /' "$T/fake.log" 2>/dev/null
}
totals() {
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	exit $((fail != 0))
}

echo "TAP version 13"
for c in openssl python3; do
	if ! command -v "$c" >/dev/null; then
		echo "ok 1 # SKIP $c is not installed"
		skip=1
		totals
	fi
done

T=$(mktemp -d /tmp/test_cbn_tls.XXXXXX)
LAPI_PID='' BOUNCER_PID=''
cleanup() {
	[ -z "$BOUNCER_PID" ] || kill "$BOUNCER_PID" 2>/dev/null
	[ -z "$LAPI_PID" ] || kill "$LAPI_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# certs: the CA and the certificates, in $T.
# shellcheck source=cbn_certs.sh
source "$DIR/cbn_certs.sh"
if ! certs >"$T/openssl.log" 2>&1; then
	echo "not ok 1 certificates made with openssl"
	sed 's/^/#   /' "$T/openssl.log"
	fail=1
	totals
fi

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

d() {	# d ID SCOPE VALUE DURATION: a decision as the Local API writes it
	printf '{"duration":"%s","id":%s,"origin":"crowdsec","scenario":"crowdsecurity/ssh-bf","scope":"%s","type":"ban","value":"%s"}' \
		"$4" "$1" "$2" "$3"
}
ans() {	# ans DELETED NEW: a stream answer, each a JSON list or null
	local body
	body=$(printf '{"deleted":%s,"new":%s}' "$1" "$2")
	printf '{"status":200,"body":%s}' "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$body")"
}

# Two addresses of one /64, one of another, an IPv4 one; then the first
# two end one after the other.
A=2001:db8:1:2::a B=2001:db8:1:2:ffff::b C=2001:db8:7:7::c
cat >"$T/answers.json" <<ANSWERS
[
 $(ans null "[$(d 1 Ip $A 10m), $(d 2 Ip $B 5m), $(d 3 Ip $C 1m), $(d 4 Ip 192.0.2.1 1m)]"),
 $(ans "[$(d 1 Ip $A -1s)]" null),
 $(ans "[$(d 2 Ip $B -1s)]" null)
]
ANSWERS

start_lapi() {	# start_lapi TLS-ARGS...
	rm -f "$T/port"
	python3 "$DIR/fake_lapi.py" "$T/answers.json" "$T/port" "$T/requests" "$@" \
		2>>"$T/lapi.log" &
	LAPI_PID=$!
	within 10 test -s "$T/port"
}
start_bouncer() {
	CBN_FAKE_STATE=$T/state CBN_FAKE_LOG=$T/fake.log LD_PRELOAD=$FAKE \
		"$BOUNCER" -c "$1" >>"$T/bouncer.log" 2>&1 &
	BOUNCER_PID=$!
}
stop() {
	kill "$BOUNCER_PID" "$LAPI_PID" 2>/dev/null
	wait "$BOUNCER_PID" "$LAPI_PID" 2>/dev/null
	BOUNCER_PID='' LAPI_PID=''
}

touch "$T/dev"
start_lapi "$T/server.pem" "$T/server.key" "$T/ca.pem"
PORT=$(cat "$T/port")
cat >"$T/bouncer.yaml" <<BOUNCER
api_url: https://127.0.0.1:$PORT/
cert_path: $T/client.pem
key_path: $T/client.key
ca_cert_path: $T/ca.pem
update_frequency: 200ms
log_level: debug
device: $T/dev
origins:
  - crowdsec
  - cscli
scopes: [Ip, Range]
scenarios_containing: [ssh, ftp]
scenarios_not_containing:
  - crowdsecurity/http-probing
ipv6_ban_prefix: 64
BOUNCER
start_bouncer "$T/bouncer.yaml"
# shellcheck disable=SC2016 # expanded by eval, at each try
within 15 eval '[ "$(wc -l <"$T/requests")" -ge 4 ]'
stop

# 1: the certificate in place of a key; the CA checked the Local API's.
first=$(head -n 1 "$T/requests")
if [[ $first == "startup=true None cuckoo-crowdsec-bouncer/v"*" cuckoo-bouncer" ]] &&
   [ "$(awk '{ print $5 }' "$T/requests" | sort -u)" = cuckoo-bouncer ]; then
	ok "mTLS: the client certificate sent, no X-Api-Key, the Local API's checked with ca_cert_path"
else
	not_ok "mTLS: the client certificate sent, no X-Api-Key, the Local API's checked with ca_cert_path"
fi

# 2: the filters as the query's parameters, escaped, in every request.
want="startup=true&origins=crowdsec%2Ccscli&scopes=Ip%2CRange&scenarios_containing=ssh%2Cftp&scenarios_not_containing=crowdsecurity%2Fhttp-probing"
if [ "$(awk '{ print $4 }' "$T/requests" | head -n 1)" = "$want" ] &&
   [ "$(awk '{ print $4 }' "$T/requests" | sed -n 2p)" = "${want/startup=true/startup=false}" ]; then
	ok "origins, scopes, scenarios_containing, scenarios_not_containing: passed as query parameters"
else
	not_ok "origins, scopes, scenarios_containing, scenarios_not_containing: passed as query parameters (want $want)"
fi

# 3: ipv6_ban_prefix: one /64 for two addresses, removed with the last.
calls=$(grep -E '^(ADD|DEL|REPLACE)' "$T/fake.log" | tr '\n' ';')
# The /64's timeout shortened to B's 5 minutes, less the time gone by.
want="REPLACE crowdsec 3;ADD crowdsec 2001:db8:1:2::/64 (2[0-9][0-9]|300) 3;DEL crowdsec 2001:db8:1:2::/64;"
if [[ $calls =~ ^$want$ ]] &&
   grep -q 'crowdsec 2001:db8:7:7::/64 ' "$T/state" &&
   grep -q 'crowdsec 192.0.2.1 ' "$T/state" &&
   ! grep -q '2001:db8:1:2' "$T/state"; then
	ok "ipv6_ban_prefix 64: one entry a /64, kept while an address in it is banned, gone with the last"
else
	not_ok "ipv6_ban_prefix 64: one entry a /64, kept while an address in it is banned, gone with the last"
	echo "# device calls: $calls"
	echo "# expected:     $want"
fi

# 4: a Local API that wants a certificate, and a bouncer with a key
# only: the handshake fails, said, and the set is kept.
: >"$T/requests"
: >"$T/bouncer.log"
start_lapi "$T/server.pem" "$T/server.key" "$T/ca.pem"
PORT=$(cat "$T/port")
cat >"$T/key.yaml" <<BOUNCER
api_url: https://127.0.0.1:$PORT/
api_key: k
ca_cert_path: $T/ca.pem
update_frequency: 200ms
device: $T/dev
BOUNCER
start_bouncer "$T/key.yaml"
within 10 grep -q "GET https://127.0.0.1:$PORT/v1/decisions/stream?startup=true: .*; the set keeps its entries" "$T/bouncer.log"
rc=$?
stop
if [ "$rc" = 0 ] && [ ! -s "$T/requests" ] && grep -q 'crowdsec 192.0.2.1 ' "$T/state"; then
	ok "no client certificate for a Local API that wants one: the TLS error said, the set kept"
else
	not_ok "no client certificate for a Local API that wants one: the TLS error said, the set kept"
fi

# 5: without ca_cert_path the Local API's certificate is not trusted.
: >"$T/bouncer.log"
start_lapi "$T/server.pem" "$T/server.key" "$T/ca.pem"
PORT=$(cat "$T/port")
grep -v '^ca_cert_path' "$T/bouncer.yaml" |
	sed "s,^api_url: .*,api_url: https://127.0.0.1:$PORT/," >"$T/noca.yaml"
start_bouncer "$T/noca.yaml"
within 10 grep -qi 'certificate' "$T/bouncer.log"
rc=$?
stop
if [ "$rc" = 0 ] && grep -q 'the set keeps its entries' "$T/bouncer.log"; then
	ok "no ca_cert_path: the Local API's certificate refused"
else
	not_ok "no ca_cert_path: the Local API's certificate refused"
fi

# 6: log_mode: file, and no module: the line that says so is in the file,
# none on stderr past the start; the device back, the bans go in.
: >"$T/bouncer.log"
rm -f "$T/dev" "$T/state"
mkdir -p "$T/log"
start_lapi "$T/server.pem" "$T/server.key" "$T/ca.pem"
PORT=$(cat "$T/port")
sed "s,^api_url: .*,api_url: https://127.0.0.1:$PORT/," "$T/bouncer.yaml" >"$T/file.yaml"
printf 'log_mode: file\nlog_dir: %s/log/\n' "$T" >>"$T/file.yaml"
start_bouncer "$T/file.yaml"
LOG=$T/log/cuckoo-crowdsec-bouncer.log
within 10 grep -qs 'error: cuckoo_nf module not loaded ('"$T"'/dev: No such file or directory): modprobe cuckoo_nf' "$LOG"
rc=$?
touch "$T/dev"
within 10 grep -qs "^crowdsec [0-9]" "$T/state"
rc2=$?
stop
if [ "$rc" = 0 ] && [ "$rc2" = 0 ] && [ ! -s "$T/bouncer.log" ] &&
   grep -q 'info: in step with the Local API again' "$LOG"; then
	ok "log_mode: file: the missing module said in log_dir's file, nothing on stderr"
else
	not_ok "log_mode: file: the missing module said in log_dir's file, nothing on stderr"
	sed 's/^/#   /' "$LOG" 2>/dev/null | tail -n 5
fi
totals
