#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# crowdsec drives cuckoo_nf: Debian's crowdsec Local API (a plain process
# with a configuration and sqlite database of this test's, no agent) and
# cuckoo-crowdsec-bouncer (copied next to the tests by their Makefile),
# both in the receiver's namespace, the bouncer polling every second.
# Decisions are made with cscli.  An engine test: it needs the VM's
# engines layer (make check-engines, or CNF_VM_LAYERS=engines
# selftests/vm/run selftests/vm/run_tests.sh crowdsec.sh) and skips
# without crowdsec.
#
#   sender ns: 10.0.8.1-.17, fd08::1, fd08::11     receiver ns: 10.0.8.100,
#      s1 ------------------------------------ r1   fd08::100; LAPI, bouncer
#
# A source's traffic is judged on counters: a banned source's pings are
# all added to the module's dropped counter and none is answered; a source
# let through, the other way round.
#
#   test_ban            cscli decisions add --ip: dropped within the poll
#                       interval, its duration as the entry's timeout; an
#                       unlisted source passes
#   test_range          --range: every source in it dropped
#   test_ipv6           the same for an IPv6 source
#   test_delete         cscli decisions delete --ip / --range: passes again
#   test_kernel_expiry  the bouncer frozen (SIGSTOP) once it banned: the
#                       kernel removes the entry when the decision's time
#                       runs out and the source passes
#   test_restart        the bouncer restarted while a banned source pings
#                       without a pause: every ping dropped throughout; a
#                       decision deleted and one added while it was down
#                       are out of and in the set after
#   test_unreachable    the Local API stopped: the bouncer says so and the
#                       set keeps dropping; started again, the bouncer
#                       is in step and applies new bans
#   test_ipv6_prefix    ipv6_ban_prefix: 64: two addresses of a /64
#                       banned, one entry for the /64; the longer's
#                       decision deleted: the entry stays with the
#                       other's timeout; the last deleted: it passes
#   test_metrics        prometheus: enabled and deny_log: true: the bans
#                       go to a set per origin (crowdsec-cscli), which
#                       logs its drops, the set crowdsec is emptied;
#                       after a ban and dropped pings, /metrics
#                       (scraped with busybox wget) passes promtool check
#                       metrics and its figures are the module's: the
#                       set's entries and matched packets and bytes of
#                       `cuckooctl sets -j`, the checked ones of
#                       `cuckooctl stats -j`
set -uo pipefail

ALL_TESTS="test_ban test_range test_ipv6 test_delete test_kernel_expiry
	test_restart test_unreachable test_ipv6_prefix test_metrics"

NPINGS=3
S=cs-s-$$
R=cs-r-$$
DST4=10.0.8.100
DST6=fd08::100
SRCS=(10.0.8.1 10.0.8.2 10.0.8.3 10.0.8.5 10.0.8.6 10.0.8.9 10.0.8.17
	fd08::1 fd08::11)
BOUNCER=$(dirname "$(realpath "$0")")/cuckoo-crowdsec-bouncer
PORT=8080
METRICS_PORT=60601
TMP=
LAPI_PID=
BOUNCER_PID=

# shellcheck source=lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"

ctl() { nsx "$R" cuckooctl "$@"; }
# cscli: in the receiver's namespace, where its decisions go through the
# Local API (as the machine the setup registered).
cs() {
	if ! nsx "$R" cscli -c "$TMP/config.yaml" "$@" >"$TMP/cscli.out" 2>&1; then
		sed 's/^/# cscli: /' "$TMP/cscli.out"
		return 1
	fi
}

# logged N TEXT: the bouncer's log has more than N lines with TEXT.
log_count() { grep -c -- "$1" "$TMP/bouncer.log"; }
logged() { (($(log_count "$2") > $1)); }

# The Local API's own configuration: its database, no hub, no Central API.
write_conf() {
	mkdir -p "$TMP/data" "$TMP/hub" || return 1
	echo '{}' >"$TMP/hub/.index.json"
	echo 'simulation: off' >"$TMP/simulation.yaml"
	cat >"$TMP/profiles.yaml" <<-'EOF'
	name: default_ip_remediation
	filters:
	 - Alert.Remediation == true && Alert.GetScope() == "Ip"
	decisions:
	 - type: ban
	   duration: 4h
	on_success: break
	EOF
	cat >"$TMP/config.yaml" <<-EOF
	common:
	  daemonize: false
	  log_media: stdout
	  log_level: info
	  working_dir: .
	config_paths:
	  config_dir: $TMP/
	  data_dir: $TMP/data/
	  simulation_path: $TMP/simulation.yaml
	  hub_dir: $TMP/hub/
	  index_path: $TMP/hub/.index.json
	  notification_dir: $TMP/notifications/
	  plugin_dir: /usr/lib/crowdsec/plugins/
	db_config:
	  type: sqlite
	  db_path: $TMP/data/crowdsec.db
	  use_wal: false
	api:
	  client:
	    credentials_path: $TMP/local_api_credentials.yaml
	  server:
	    log_level: info
	    listen_uri: 127.0.0.1:$PORT
	    profiles_path: $TMP/profiles.yaml
	prometheus:
	  enabled: false
	EOF
	: >"$TMP/local_api_credentials.yaml"
}

start_lapi() {
	local argv n
	n=$(grep -c 'Local API listening' "$TMP/lapi.log" 2>/dev/null)
	nsx_argv argv "$R" crowdsec -c "$TMP/config.yaml" -no-cs
	"${argv[@]}" >>"$TMP/lapi.log" 2>&1 &
	LAPI_PID=$!
	# shellcheck disable=SC2016 # expanded by eval, at each try
	wait_for 60 eval '(($(grep -c "Local API listening" "$TMP/lapi.log") > n))' || {
		note "the Local API did not start:"
		sed 's/^/# /' "$TMP/lapi.log"
		return 1
	}
}
stop_lapi() {
	kill "$LAPI_PID" && wait "$LAPI_PID"
	LAPI_PID=
}

start_bouncer() {
	local argv
	nsx_argv argv "$R" "$BOUNCER" -c "$TMP/bouncer.yaml"
	"${argv[@]}" >>"$TMP/bouncer.log" 2>&1 &
	BOUNCER_PID=$!
}
# stop_bouncer: SIGTERM, and its exit status.
stop_bouncer() {
	local rc
	kill -CONT "$BOUNCER_PID"
	kill -TERM "$BOUNCER_PID"
	wait "$BOUNCER_PID"
	rc=$?
	BOUNCER_PID=
	return "$rc"
}

cleanup() {
	[[ -z $BOUNCER_PID ]] || { kill -CONT "$BOUNCER_PID"; kill "$BOUNCER_PID"; }
	[[ -z $LAPI_PID ]] || kill "$LAPI_PID"
	wait
}

setup() {
	local key
	tmpdir TMP || return 1
	veth_pair 1 "$S" "$R" "$DST4" "$DST6" "${SRCS[@]}" || return 1
	ctl mode drop >/dev/null || return 1
	write_conf || return 1
	defer cleanup
	cs machines add -a -f "$TMP/local_api_credentials.yaml" || return 1
	start_lapi || return 1
	key=$(nsx "$R" cscli -c "$TMP/config.yaml" bouncers add cuckoo-bouncer -o raw) ||
		return 1
	cat >"$TMP/bouncer.yaml" <<-EOF
	api_url: http://127.0.0.1:$PORT/
	api_key: $key
	update_frequency: 1s
	log_level: debug
	EOF
	start_bouncer
	if ! wait_for 60 logged 0 "set crowdsec replaced" || ! set_exists crowdsec; then
		note "the bouncer did not set up its set:"
		sed 's/^/# /' "$TMP/bouncer.log"
		return 1
	fi
}

# expect VERDICT SRC: NPINGS pings from SRC are all dropped by the module
# ("drop") or all answered ("pass").
expect() {
	local verdict=$1 src=$2 fam=ipv4 d0 d1 tx rx argv rc=0 wait
	local -A st
	is_v6 "$src" && fam=ipv6
	ns_stats st "$R" "$TMP/stats" || { fail "$verdict $src: read stats"; return; }
	d0=${st[$fam.dropped]}
	[[ $verdict == drop ]] && wait=0.01 || wait=10
	ping_argv argv "$S" "$src" -c "$NPINGS" -i 0.05 -W "$wait"
	"${argv[@]}" >"$TMP/ping" 2>&1
	ping_parse tx rx "$TMP/ping"
	ns_stats st "$R" "$TMP/stats" || { fail "$verdict $src: read stats"; return; }
	d1=${st[$fam.dropped]}
	case $verdict in
	pass) ((tx == NPINGS && rx == NPINGS && d1 == d0)) || rc=1 ;;
	drop) ((tx == NPINGS && rx == 0 && d1 - d0 == NPINGS)) || rc=1 ;;
	esac
	((rc == 0)) || note "sent $tx, answered $rx, dropped +$((d1 - d0))"
	verdict "$rc" "$src: $verdict"
}

# entry_timeout VAR ADDR: VAR = the seconds ADDR's entry in set crowdsec
# has left ("ADDR timeout N" in `cuckooctl list`), "none" without one,
# empty when it is not listed.
entry_timeout() {
	local -n _t=$1
	local a w n
	_t=
	while read -r a w n; do
		[[ $a == "$2" ]] || continue
		if [[ $w == timeout ]]; then _t=$n; else _t=none; fi
	done < <(ctl -s crowdsec list)
}

# ban SRC ARG...: cscli decisions add ARG..., then SRC in the set.
ban() {
	local src=$1 t0=$SECONDS
	shift
	cs decisions add "$@" || { fail "cscli decisions add $*"; return 1; }
	# The poll interval is 1 s; TCG and cscli's own start take more, and
	# on a busy host (load 14 on 2 CPUs) once 18 s: a wait bounds only a
	# bouncer that never applies the decision, so it can be generous.
	wait_for 60 set_has crowdsec "$src"
	verdict $? "cscli decisions add $*: $src in the set after $((SECONDS - t0)) s"
}

test_ban() {
	local t
	note "a ban of 1 minute: dropped, the entry ends with the decision"
	ban 10.0.8.1 --ip 10.0.8.1 --duration 1m || return
	entry_timeout t 10.0.8.1
	[[ $t =~ ^[0-9]+$ ]] && ((t > 30 && t <= 60))
	verdict $? "10.0.8.1 has a timeout of at most 60 s ($t)"
	expect drop 10.0.8.1
	expect pass 10.0.8.9
}

test_range() {
	note "a range decision drops the range"
	ban 10.0.8.17 --range 10.0.8.16/28 --duration 1m || return
	[[ $(ctl -s crowdsec list) == *"10.0.8.16/28 timeout "* ]]
	verdict $? "10.0.8.16/28 listed with a timeout"
	expect drop 10.0.8.17
	expect pass 10.0.8.9
}

test_ipv6() {
	note "an IPv6 ban"
	ban fd08::1 --ip fd08::1 --duration 1m || return
	expect drop fd08::1
	expect pass fd08::11
}

test_delete() {
	note "cscli decisions delete: passes again"
	set_has crowdsec 10.0.8.1 || ban 10.0.8.1 --ip 10.0.8.1 --duration 1m || return
	set_has crowdsec 10.0.8.17 || ban 10.0.8.17 --range 10.0.8.16/28 --duration 1m || return
	cs decisions delete --ip 10.0.8.1 && cs decisions delete --range 10.0.8.16/28
	verdict $? "cscli decisions delete --ip 10.0.8.1, --range 10.0.8.16/28"
	wait_for 60 eval 'set_lacks crowdsec 10.0.8.1 && set_lacks crowdsec 10.0.8.17'
	verdict $? "10.0.8.1 and 10.0.8.16/28 out of the set"
	expect pass 10.0.8.1
	expect pass 10.0.8.17
}

frozen() { [[ $(</proc/"$BOUNCER_PID"/stat) =~ ^[0-9]+\ \(.*\)\ T ]]; }

test_kernel_expiry() {
	local t0
	note "the bouncer frozen once it banned: the kernel's timeout ends the ban"
	ban 10.0.8.3 --ip 10.0.8.3 --duration 8s || return
	kill -STOP "$BOUNCER_PID"
	wait_for 5 frozen
	verdict $? "bouncer (pid $BOUNCER_PID) stopped"
	t0=$SECONDS
	expect drop 10.0.8.3
	wait_for 15 set_lacks crowdsec 10.0.8.3
	verdict $? "the kernel removed 10.0.8.3 after $((SECONDS - t0)) s"
	frozen
	verdict $? "the bouncer still stopped"
	expect pass 10.0.8.3
	kill -CONT "$BOUNCER_PID"
}

test_restart() {
	local argv pid d0 d1 tx rx n rc
	local -A st
	note "restart: a banned source dropped throughout, changes made meanwhile applied"
	ban 10.0.8.2 --ip 10.0.8.2 --duration 5m || return
	ban 10.0.8.5 --ip 10.0.8.5 --duration 5m || return
	n=$(log_count "set crowdsec replaced")
	ns_stats st "$R" "$TMP/stats" || { fail "read stats"; return; }
	d0=${st[ipv4.dropped]}
	ping_argv argv "$S" 10.0.8.2 -i 0.1 -W 0.01
	"${argv[@]}" >"$TMP/ping" 2>&1 &
	pid=$!
	sleep 1
	stop_bouncer
	rc=$?
	verdict "$rc" "SIGTERM: the bouncer exited with status $rc"
	set_has crowdsec 10.0.8.2 && set_has crowdsec 10.0.8.5
	verdict $? "its entries stay while it is stopped"
	cs decisions delete --ip 10.0.8.5 && cs decisions add --ip 10.0.8.6 --duration 5m
	verdict $? "while stopped: 10.0.8.5's decision deleted, 10.0.8.6 banned"
	sleep 1
	start_bouncer
	wait_for 30 logged "$n" "set crowdsec replaced"
	verdict $? "restarted: the set replaced"
	sleep 1
	kill -INT "$pid"
	wait "$pid"
	ping_parse tx rx "$TMP/ping"
	ns_stats st "$R" "$TMP/stats" || { fail "read stats"; return; }
	d1=${st[ipv4.dropped]}
	((tx >= 20 && rx == 0 && d1 - d0 == tx))
	verdict $? "throughout: $tx pings from 10.0.8.2, $rx answered, $((d1 - d0)) dropped"
	set_lacks crowdsec 10.0.8.5 && set_has crowdsec 10.0.8.6 && set_has crowdsec 10.0.8.2
	verdict $? "after: 10.0.8.5 out, 10.0.8.6 and 10.0.8.2 in"
	expect pass 10.0.8.5
	expect drop 10.0.8.6
}

test_unreachable() {
	local n
	note "the Local API stopped: the set keeps dropping; back: caught up"
	set_has crowdsec 10.0.8.2 || ban 10.0.8.2 --ip 10.0.8.2 --duration 5m || return
	n=$(log_count "the set keeps its entries")
	stop_lapi
	wait_for 15 logged "$n" "the set keeps its entries"
	verdict $? "the bouncer reports the Local API unreachable"
	grep -m1 "the set keeps its entries" "$TMP/bouncer.log" | sed 's/^/# /'
	sleep 2
	set_has crowdsec 10.0.8.2
	verdict $? "10.0.8.2 still in the set"
	expect drop 10.0.8.2
	# cscli goes through the Local API too: decisions wait for it.
	n=$(log_count "in step with the Local API again")
	start_lapi || { fail "the Local API restarted"; return; }
	wait_for 90 logged "$n" "in step with the Local API again"
	verdict $? "the bouncer in step again"
	expect drop 10.0.8.2
	ban 10.0.8.1 --ip 10.0.8.1 --duration 5m || return
	expect drop 10.0.8.1
}

# over VAR SECONDS: the /64's timeout (entry_timeout) is more than SECONDS.
over() {
	local t
	entry_timeout t "$1"
	[[ $t =~ ^[0-9]+$ ]] && ((t > $2))
}

test_ipv6_prefix() {
	local n t
	note "ipv6_ban_prefix: 64: one entry for a /64, until its last address's ban ends"
	n=$(log_count "set crowdsec replaced")
	stop_bouncer
	echo "ipv6_ban_prefix: 64" >>"$TMP/bouncer.yaml"
	start_bouncer
	wait_for 30 logged "$n" "set crowdsec replaced"
	verdict $? "restarted with ipv6_ban_prefix: 64"
	ban fd08::11 --ip fd08::11 --duration 5m || return
	cs decisions add --ip fd08::1 --duration 10m
	wait_for 15 over fd08::/64 300
	verdict $? "fd08::1 banned for 10 minutes: fd08::/64's timeout past 5 minutes"
	[[ $(ctl -s crowdsec list) != *"fd08::1 "* && $(ctl -s crowdsec list) != *"fd08::11 "* ]]
	verdict $? "one entry, fd08::/64, for both addresses"
	expect drop fd08::11
	cs decisions delete --ip fd08::1
	# shellcheck disable=SC2016 # expanded by eval, at each try
	wait_for 15 eval '! over fd08::/64 300'
	verdict $? "fd08::1's decisions deleted: the /64 kept with fd08::11's 5 minutes"
	set_has crowdsec fd08::11
	verdict $? "fd08::/64 still in the set"
	expect drop fd08::1
	cs decisions delete --ip fd08::11
	wait_for 15 set_lacks crowdsec fd08::11
	verdict $? "the last address's decisions deleted: fd08::/64 out of the set"
	expect pass fd08::1
	expect pass fd08::11
	entry_timeout t fd08::/64
	[[ -z $t ]]
	verdict $? "no entry left for fd08::/64"
}

# scrape FILE: /metrics of the bouncer into FILE.
scrape() {
	nsx "$R" wget -q -O "$1" "http://127.0.0.1:$METRICS_PORT/metrics"
}

# metric FILE NAME LABELS: the value of NAME{LABELS} in FILE.
metric() {
	local n v
	while read -r n v; do
		[[ $n == "$2{$3}" ]] && { echo "$v"; return 0; }
	done <"$1"
	return 1
}

# set_json SET KEY: KEY of SET in `cuckooctl sets -j`.
set_json() { ctl -j sets | jq -r --arg s "$1" --arg k "$2" '.[] | select(.name == $s) | .[$k]'; }

test_metrics() {
	local n m st0 st1 got want pkts bytes key
	local -A st
	note "prometheus: a set per origin, /metrics the module's figures"
	n=$(log_count "set crowdsec-cscli replaced")
	stop_bouncer
	printf 'deny_log: true\nprometheus:\n  enabled: true\n  listen_port: %s\n' \
		"$METRICS_PORT" >>"$TMP/bouncer.yaml"
	start_bouncer
	wait_for 30 logged "$n" "set crowdsec-cscli replaced"
	verdict $? "restarted with prometheus: the active bans in crowdsec-cscli"
	grep -m1 "metrics at" "$TMP/bouncer.log" | sed 's/^/# /'
	[[ $(ctl -s crowdsec list) == "" ]]
	verdict $? "the set crowdsec emptied"
	ban_in crowdsec-cscli 10.0.8.3 --ip 10.0.8.3 --duration 5m || return
	got=$(set_json crowdsec-cscli log)
	[[ $got == on ]]
	verdict $? "deny_log: crowdsec-cscli logs its drops ($got)"
	ns_stats st "$R" "$TMP/stats" || { fail "read stats"; return; }
	[[ ${st[json]} =~ \"log\":\{\"lines\":([0-9]+) ]] && n=${BASH_REMATCH[1]}
	expect drop 10.0.8.3
	expect drop 10.0.8.3
	ns_stats st "$R" "$TMP/stats" || { fail "read stats"; return; }
	[[ ${st[json]} =~ \"log\":\{\"lines\":([0-9]+) ]] &&
		((BASH_REMATCH[1] - n == 2 * NPINGS))
	verdict $? "the $((2 * NPINGS)) drops given to the kernel's logger (stats -j log.lines)"
	wait_for 10 scrape "$TMP/metrics"
	verdict $? "GET /metrics"
	if m=$(command -v promtool); then
		"$m" check metrics <"$TMP/metrics" >"$TMP/promtool" 2>&1
		verdict $? "promtool check metrics: $(tr '\n' ' ' <"$TMP/promtool")"
	else
		note "no promtool in the VM (scripts/promtool.sh fetch): not checked"
	fi
	# The module's figures around a second scrape: no packet comes
	# between (the hooks pass loopback over).
	ns_stats st "$R" "$TMP/stats" || { fail "read stats"; return; }
	st0=${st[json]}
	pkts=$(set_json crowdsec-cscli matched)
	bytes=$(set_json crowdsec-cscli matched_bytes)
	scrape "$TMP/metrics" || { fail "GET /metrics again"; return; }
	ns_stats st "$R" "$TMP/stats" || { fail "read stats"; return; }
	st1=${st[json]}
	[[ $st0 == "$st1" ]]
	verdict $? "no packet counted while scraping"
	got=$(metric "$TMP/metrics" fw_bouncer_banned_ips 'origin="cscli",ip_type="ipv4"')
	want=$(set_json crowdsec-cscli v4_entries)
	[[ -n $got && $got == "$want" ]] && ((got >= 1))
	verdict $? "banned_ips{cscli,ipv4} $got, crowdsec-cscli's IPv4 entries $want"
	got=$(metric "$TMP/metrics" fw_bouncer_dropped_packets 'origin="cscli",ip_type="ipv4"')
	[[ -n $got && $got == "$pkts" ]] && ((got >= 2 * NPINGS))
	verdict $? "dropped_packets{cscli,ipv4} $got, crowdsec-cscli's matched $pkts (at least $((2 * NPINGS)))"
	got=$(metric "$TMP/metrics" fw_bouncer_dropped_bytes 'origin="cscli",ip_type="ipv4"')
	# A ping's IPv4 datagram: 20 + 8 + 56 bytes.
	[[ -n $got && $got == "$bytes" ]] && ((got >= 2 * NPINGS * 84))
	verdict $? "dropped_bytes{cscli,ipv4} $got, crowdsec-cscli's matched_bytes $bytes"
	for key in packets bytes; do
		if [[ $key == packets ]]; then
			want=$((${st[ipv4.checked]} + ${st[ipv4.xdp_checked]} + ${st[ipv4.tc_checked]}))
		else
			want=$((${st[ipv4.checked_bytes]} + ${st[ipv4.xdp_checked_bytes]} +
				${st[ipv4.tc_checked_bytes]}))
		fi
		got=$(metric "$TMP/metrics" "fw_bouncer_processed_$key" 'ip_type="ipv4"')
		[[ -n $got && $got == "$want" ]] && ((got > 0))
		verdict $? "processed_$key{ipv4} $got, stats -j's checked $want"
	done
	nsx "$R" wget -q -O /dev/null "http://127.0.0.1:$METRICS_PORT/other" 2>/dev/null
	verdict $((!$?)) "another path: an error"
}

# ban_in SET SRC ARG...: cscli decisions add ARG..., then SRC in SET.
ban_in() {
	local set=$1 src=$2 t0=$SECONDS
	shift 2
	cs decisions add "$@" || { fail "cscli decisions add $*"; return 1; }
	wait_for 60 set_has "$set" "$src"
	verdict $? "cscli decisions add $*: $src in $set after $((SECONDS - t0)) s"
}

require_root
require_module
require_cmds crowdsec cscli ping
require_file "$BOUNCER" "the bouncer, built when libcurl and json-c development files are installed"
setup || ktap_bail "setup: namespaces, veth, the Local API or the bouncer"
run_tests
