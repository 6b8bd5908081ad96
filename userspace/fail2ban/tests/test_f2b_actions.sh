#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fail2ban actions cuckoo_nf and cuckoo_nf-rules run by a real
# fail2ban-server (Debian's), on this host, without the module: cuckooctl
# talks to a device emulated by ctl_fake_dev.so (LD_PRELOAD, its state in
# a file), and iptables/ip6tables are a script keeping each family's rules
# as lines of a file.  What each action's commands do: the sets, the
# entries, the rules, ipv6_ban_prefix, and a missing module's log line.
# The packets themselves are selftests/fail2ban.sh's, in the VM.  Skipped
# when fail2ban is not installed.  kselftest-style output, "# Totals:" last.
#
# The jails (filter "auth failure from <HOST>", maxretry 1):
#   plain   cuckoo_nf, ipv6_ban_prefix = 64
#   rules   cuckoo_nf-rules, port 22, protocol tcp,udp
#   nomod   cuckoo_nf, cuckooctl given a device that does not exist
set -u
DIR=@F2B_TESTDIR@
CTL=$DIR/cuckooctl
FAKE=$DIR/ctl_fake_dev.so
pass=0 fail=0 skip=0 n=0

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"
	echo "# fail2ban's errors:"
	grep -E 'stderr|returned' "$T/fail2ban.log" | sed 's/^/#   /' | tail -n 4
}
check() { if "${@:2}"; then ok "$1"; else not_ok "$1"; fi; }
totals() {
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
	exit $((fail != 0))
}

echo "TAP version 13"
if ! command -v fail2ban-server >/dev/null; then
	echo "ok 1 # SKIP fail2ban is not installed (apt-get install fail2ban)"
	skip=1
	totals
fi

T=$(mktemp -d /tmp/test_f2b_actions.XXXXXX)
cleanup() {
	fail2ban-client -c "$T/conf" stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

# The emulated module, one per jail: the emulation keeps its state in a
# file, read and written whole by each cuckooctl, and fail2ban runs the
# jails' actions at the same time.  ctl JAIL ARG...: cuckooctl on JAIL's.
ctl() {
	LD_PRELOAD=$FAKE CNF_FAKE_KERNEL=new CNF_FAKE_STATE=$T/dev-$1 "$CTL" -d /dev/null "${@:2}"
}
ctlcmd() { echo "env LD_PRELOAD=$FAKE CNF_FAKE_KERNEL=new CNF_FAKE_STATE=$T/dev-$1 $CTL -d /dev/null"; }

# iptables, emulated likewise.
cat >"$T/iptables" <<'EOF'
#!/bin/bash
# iptables FILE -w -C|-I|-D CHAIN RULE...: FILE holds "CHAIN RULE" lines.
f=$1 op=$3 line="${*:4}"
touch "$f"
case $op in
-C) grep -qxF -- "$line" "$f" ;;
-I) { echo "$line"; cat "$f"; } >"$f.new" && mv "$f.new" "$f" ;;
-D) grep -qxF -- "$line" "$f" || { echo "iptables: Bad rule" >&2; exit 1; }
    grep -vxF -- "$line" "$f" >"$f.new"; mv "$f.new" "$f" ;;
*) echo "iptables: $op not emulated" >&2; exit 2 ;;
esac
EOF
chmod +x "$T/iptables"
ctl plain -V | grep -q '^module: ' || { echo "Bail out! the emulated device"; exit 1; }

mkdir -p "$T/conf/action.d" "$T/conf/filter.d"
cp "$DIR/cuckoo_nf.conf" "$DIR/cuckoo_nf-rules.conf" "$T/conf/action.d/"
cat >"$T/conf/fail2ban.conf" <<EOF
[Definition]
loglevel = INFO
logtarget = $T/fail2ban.log
socket = $T/fail2ban.sock
pidfile = $T/fail2ban.pid
syslogsocket = auto
allowipv6 = auto
dbfile = :memory:
dbpurgeage = 1d
EOF
cat >"$T/conf/filter.d/cnf-test.conf" <<'EOF'
[Definition]
failregex = ^auth failure from <HOST>$
datepattern = {NONE}
EOF
cat >"$T/conf/jail.conf" <<EOF
[DEFAULT]
backend = polling
maxretry = 1
findtime = 60
bantime = 600
filter = cnf-test

[plain]
enabled = true
logpath = $T/plain.log
action = cuckoo_nf[cuckooctl="$(ctlcmd plain)", ipv6_ban_prefix=64]

[rules]
enabled = true
logpath = $T/rules.log
action = cuckoo_nf-rules[cuckooctl="$(ctlcmd rules)", port=22, protocol="tcp,udp", iptables="$T/iptables $T/ipt4 -w", ip6tables="$T/iptables $T/ipt6 -w"]

[nomod]
enabled = true
logpath = $T/nomod.log
action = cuckoo_nf[cuckooctl="$(ctlcmd nomod) -d $T/no-such-device"]
EOF
: >"$T/plain.log" && : >"$T/rules.log" && : >"$T/nomod.log"

# wait_for SECONDS CMD...: true once CMD is.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}
f2b() { fail2ban-client -c "$T/conf" "$@"; }
fails() { echo "auth failure from $2" >>"$T/$1.log"; }
# listed SET ENTRY, set_exists SET, rules_only SET: on the set's jail's
# module (SET is f2b-JAIL).
listed() { ctl "${1#f2b-}" -s "$1" list 2>/dev/null | grep -q "^$2\( \|$\)"; }
unlisted() { ! listed "$@"; }
set_exists() { ctl "${1#f2b-}" -j sets | grep -q "\"name\":\"$1\""; }
rules_only() { ctl "${1#f2b-}" -j sets | grep -q "\"name\":\"$1\",[^}]*\"rules_only\":true"; }
logged() { grep -q -- "$1" "$T/fail2ban.log"; }
not() { ! "$@"; }
# rule_counts N: N rules in each family.
rule_counts() {
	[[ $(wc -l <"$T/ipt4") == "$1" && $(wc -l <"$T/ipt6") == "$1" ]]
}

fail2ban-server -c "$T/conf" -b -x >"$T/server.out" 2>&1 ||
	{ sed 's/^/# /' "$T/server.out"; echo "Bail out! fail2ban-server"; exit 1; }
if ! wait_for 30 set_exists f2b-plain || ! wait_for 30 set_exists f2b-rules; then
	sed 's/^/# /' "$T/fail2ban.log"
	echo "Bail out! the jails did not start"
	exit 1
fi

# cuckoo_nf: a hooks set; an IPv6 offender's /64 banned beside it.
check "plain: f2b-plain is a set the hooks consult" not rules_only f2b-plain
fails plain 10.0.7.1
check "plain: an IPv4 offender banned alone" wait_for 20 listed f2b-plain 10.0.7.1
fails plain fd07:0:0:1::5
check "plain: an IPv6 offender banned" wait_for 20 listed f2b-plain fd07:0:0:1::5
check "plain: and its /64" wait_for 20 listed f2b-plain fd07:0:0:1::/64
fails plain fd07:0:0:1::6
check "plain: a second offender of that /64 banned" wait_for 20 listed f2b-plain fd07:0:0:1::6
f2b set plain unbanip fd07:0:0:1::5 >/dev/null
check "plain: the first unbanned: its address goes" unlisted f2b-plain fd07:0:0:1::5
check "plain: the /64 stays, the second still banned in it" listed f2b-plain fd07:0:0:1::/64
f2b set plain unbanip fd07:0:0:1::6 >/dev/null
check "plain: the second unbanned: its address goes" unlisted f2b-plain fd07:0:0:1::6
check "plain: and the /64 with it" unlisted f2b-plain fd07:0:0:1::/64
check "plain: the IPv4 ban untouched" listed f2b-plain 10.0.7.1

# cuckoo_nf-rules: a rules-only set and one rule per chain, protocol and
# family, which stop removes.
RULE4="INPUT -p tcp -m multiport --dports 22 -m cuckoo --match-set f2b-rules src -j REJECT"
check "rules: f2b-rules is --rules-only" rules_only f2b-rules
check "rules: the IPv4 tcp rule" grep -qxF -- "$RULE4" "$T/ipt4"
check "rules: the IPv6 udp rule" grep -qxF -- "${RULE4/tcp/udp}" "$T/ipt6"
check "rules: 2 rules per family" rule_counts 2
fails rules 10.0.7.2
check "rules: an offender banned into the set" wait_for 20 listed f2b-rules 10.0.7.2
fails rules fd07::7
check "rules: an IPv6 offender banned" wait_for 20 listed f2b-rules fd07::7
check "rules: ipv6_ban_prefix is off by default: no network" not grep -q / <(ctl rules -s f2b-rules list)
f2b stop rules >/dev/null
check "rules: stopped, the rules are gone" rule_counts 0
check "rules: and the set" not set_exists f2b-rules

# A missing module: the jail's start fails with a line naming it.
check "nomod: fail2ban's log says the module is not loaded" \
	wait_for 20 logged "cuckoo_nf: module not loaded"
check "nomod: no set made" not set_exists f2b-nomod

# A bad ipv6_ban_prefix: the ban fails, naming the value.
sed -i 's/ipv6_ban_prefix=64/ipv6_ban_prefix=65x/' "$T/conf/jail.conf"
f2b reload plain >/dev/null
fails plain fd07:0:0:2::1
check "a bad ipv6_ban_prefix named in fail2ban's log" \
	wait_for 20 logged "ipv6_ban_prefix = 65x: not a prefix length from 0 to 128"
totals
