// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of `restore --from-ipset`'s reader: what `ipset save` prints
 * becomes the sets of a save, and every line it cannot map is refused,
 * named, with nothing returned.  No device needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "ctl_format.h"
#include "ctl_ipset.h"

/* What the reader said: "LINE: text" or "LINE: note: text", a line each. */
struct said {
	char text[4096];
};

static void collect(void *ctx, unsigned long lineno, bool note,
		    const char *text)
{
	struct said *s = ctx;
	size_t len = strlen(s->text);

	snprintf(s->text + len, sizeof(s->text) - len, "%lu: %s%s\n", lineno,
		 note ? "note: " : "", text);
}

/* ctl_ipset_read() of @text into @in; returns how many lines were bad. */
static size_t read_text(const char *text, struct ctl_input *in,
			struct said *said)
{
	char *buf = strdup(text);
	size_t bad = 12345;
	FILE *f = fmemopen(buf, strlen(text), "r");

	memset(said, 0, sizeof(*said));
	ctl_input_init(in, CTL_PARSE_F_SETS);
	if (!f || ctl_ipset_read(in, f, collect, said, &bad))
		bad = 99999;
	if (f)
		fclose(f);
	free(buf);
	return bad;
}

/* Section @i's entries, "PREFIX[ timeout N]@LINE" each, space-separated. */
static const char *entries(const struct ctl_input *in, size_t i)
{
	static char out[1024];
	size_t k, end = i + 1 < in->nsect ? in->sect[i + 1].first : in->n;
	char text[CTL_PREFIXSTRLEN];
	size_t len = 0;

	out[0] = '\0';
	for (k = in->sect[i].first; k < end; k++) {
		len += snprintf(out + len, sizeof(out) - len, "%s%s",
				len ? " " : "",
				ctl_format_prefix(&in->addrs[k], text,
						  sizeof(text)));
		if (in->timed[k])
			len += snprintf(out + len, sizeof(out) - len,
					" timeout %u", in->timeout[k]);
		len += snprintf(out + len, sizeof(out) - len, "@%lu",
				in->lineno[k]);
	}
	return out;
}

/* Three sets as ipset 7 saves them, with the options it prints. */
static const char save[] =
	"create f2b-sshd hash:ip family inet hashsize 1024 maxelem 65536 timeout 600 bucketsize 12 initval 0x5b7e24c6\n"
	"add f2b-sshd 203.0.113.9 timeout 583\n"
	"create v6nets hash:net family inet6 hashsize 1024 maxelem 65536 comment bucketsize 12 initval 0x8b8fa2d3\n"
	"add v6nets 2001:db8:1::/48 comment \"office uplink\"\n"
	"add v6nets 2001:db8:2::1\n"
	"create lan bitmap:ip range 192.168.0.0-192.168.0.255 counters\n"
	"add lan 192.168.0.7 packets 12 bytes 840\n"
	"add f2b-sshd 198.51.100.7 timeout 0\n"
	"add lan 192.168.0.9 packets 0 bytes 0\n";

TEST(a_save_of_three_sets)
{
	struct ctl_input in;
	struct said said;

	ASSERT_EQ(0, read_text(save, &in, &said));
	/* Sizes pass in silence; comments and counters are said once. */
	EXPECT_STREQ("3: note: comments are not kept: cuckoo_nf stores prefixes only\n"
		     "6: note: counters are not kept per entry: 'cuckooctl sets' counts the packets each set matched\n",
		     said.text);
	ASSERT_EQ(3, in.nsect);
	EXPECT_STREQ("f2b-sshd", in.sect[0].name);
	EXPECT_EQ(CNF_SET_BLOCK, in.sect[0].kind);
	EXPECT_EQ(600, in.sect[0].timeout);
	EXPECT_EQ(1, in.sect[0].lineno);
	/* An entry's own timeout kept, 0 (permanent) included. */
	EXPECT_STREQ("203.0.113.9 timeout 583@2 198.51.100.7 timeout 0@8",
		     entries(&in, 0));
	EXPECT_STREQ("v6nets", in.sect[1].name);
	EXPECT_EQ(0, in.sect[1].timeout);
	EXPECT_STREQ("2001:db8:1::/48@4 2001:db8:2::1@5", entries(&in, 1));
	EXPECT_STREQ("lan", in.sect[2].name);
	EXPECT_EQ(CNF_SET_BLOCK, in.sect[2].kind);
	EXPECT_STREQ("192.168.0.7@7 192.168.0.9@9", entries(&in, 2));
	EXPECT_EQ(0, in.nbad);
	ctl_input_free(&in);
}

TEST(netmask_ranges_and_an_empty_set)
{
	struct ctl_input in;
	struct said said;

	ASSERT_EQ(0, read_text("create nets hash:ip family inet hashsize 64 maxelem 1024 netmask 24\n"
			       "add nets 10.1.2.0\n"
			       "add nets 10.9.0.0/16\n"
			       "create hosts hash:ip family inet6 -exist\n"
			       "add hosts 2001:db8::1-2001:db8::3 -exist\n"
			       "create empty hash:net\n",
			       &in, &said));
	EXPECT_STREQ("", said.text);
	ASSERT_EQ(3, in.nsect);
	/* An address of a netmask set is the network of that length. */
	EXPECT_STREQ("10.1.2.0/24@2 10.9.0.0/16@3", entries(&in, 0));
	EXPECT_STREQ("2001:db8::1@5 2001:db8::2/127@5", entries(&in, 1));
	EXPECT_STREQ("empty", in.sect[2].name);
	EXPECT_STREQ("", entries(&in, 2));
	ctl_input_free(&in);
}

TEST(nomatch_entries_go_to_an_allow_set)
{
	struct ctl_input in;
	struct said said;

	ASSERT_EQ(0, read_text("create feed hash:net family inet timeout 300\n"
			       "add feed 10.0.0.0/8\n"
			       "add feed 10.20.0.0/16 nomatch\n"
			       "add feed 192.0.2.0/24 timeout 60\n"
			       "add feed 10.30.0.0/16 timeout 10 nomatch\n",
			       &in, &said));
	EXPECT_STREQ("1: note: nomatch entries go to an allow set NAME-nomatch, which exempts them from every block set of the namespace\n",
		     said.text);
	ASSERT_EQ(2, in.nsect);
	EXPECT_STREQ("10.0.0.0/8@2 192.0.2.0/24 timeout 60@4", entries(&in, 0));
	EXPECT_STREQ("feed-nomatch", in.sect[1].name);
	EXPECT_EQ(CNF_SET_ALLOW, in.sect[1].kind);
	EXPECT_EQ(300, in.sect[1].timeout);
	EXPECT_STREQ("10.20.0.0/16@3 10.30.0.0/16 timeout 10@5",
		     entries(&in, 1));
	ctl_input_free(&in);
}

TEST(skbinfo_and_forceadd_noted_once)
{
	struct ctl_input in;
	struct said said;

	ASSERT_EQ(0, read_text("create m hash:ip skbinfo forceadd\n"
			       "add m 192.0.2.1 skbmark 0x1/0xffffffff skbprio 1:2 skbqueue 3\n"
			       "add m 192.0.2.2 skbmark 0x2\n",
			       &in, &said));
	EXPECT_STREQ("1: note: skbinfo is not kept: cuckoo_nf sets no mark, priority or queue\n"
		     "1: note: forceadd is not kept: cuckoo_nf never evicts an entry, its limit is the namespace's memory limit\n",
		     said.text);
	EXPECT_STREQ("192.0.2.1@2 192.0.2.2@3", entries(&in, 0));
	ctl_input_free(&in);
}

/* Every line that cannot be mapped is named, and nothing is returned. */
TEST(refusals_name_the_line_and_change_nothing)
{
	static const char text[] =
		"create ok hash:ip\n"
		"add ok 192.0.2.1\n"
		"create ports hash:ip,port family inet\n"
		"flush ok\n"
		"add ghost 192.0.2.2\n"
		"add ok 2001:db8::1\n"
		"add ok 192.0.2.300\n"
		"add ok 192.0.2.3 timeout soon\n"
		"create ok hash:net\n"
		"create a/b hash:ip\n"
		"create c hash:ip maxelem 10 exotic\n"
		"add ok 192.0.2.4 comment \"no end\n"
		"create m hash:ip netmask 24\n"
		"add m 10.0.0.1\n"
		"add ok 192.0.2.5 frobnicate\n"
		"create v6 hash:net family inet6 netmask 129\n"
		"add ok 192.0.2.9-192.0.2.1\n"
		"create a_name_of_twenty_five_chr hash:ip\n"
		"add a_name_of_twenty_five_chr 192.0.2.7 nomatch\n";
	struct ctl_input in;
	struct said said;

	EXPECT_EQ(15, read_text(text, &in, &said));
	EXPECT_STREQ("3: ports: type hash:ip,port holds more than addresses and prefixes; cuckoo_nf takes hash:ip, hash:net and bitmap:ip sets\n"
		     "4: flush: only the create and add lines of 'ipset save' are taken\n"
		     "5: ghost: no create line for this set before it\n"
		     "6: 2001:db8::1: an IPv6 entry in set ok of family inet\n"
		     "7: 192.0.2.300: not an IPv4 or IPv6 address or prefix\n"
		     "8: timeout soon: not a number of seconds\n"
		     "9: ok: created a second time\n"
		     "10: a/b: not a set name (1 to 31 characters of A-Z a-z 0-9 _ . -)\n"
		     "11: exotic: an option of create that cuckooctl does not know\n"
		     "12: a quote without its end, or more than 40 words\n"
		     "14: 10.0.0.1: not the network of a /24, as set m's netmask says\n"
		     "15: frobnicate: an option of add that cuckooctl does not know\n"
		     "16: netmask 129: not a prefix length\n"
		     "17: 192.0.2.9-192.0.2.1: a range whose first address comes after its last\n"
		     "18: a_name_of_twenty_five_chr: nomatch entries go to an allow set a_name_of_twenty_five_chr-nomatch, a name longer than 31 characters\n",
		     said.text);
	EXPECT_EQ(0, in.n);
	EXPECT_EQ(0, in.nsect);
	ctl_input_free(&in);
}

TEST(a_nomatch_set_named_like_another)
{
	struct ctl_input in;
	struct said said;

	EXPECT_EQ(1, read_text("create x hash:net\n"
			       "create x-nomatch hash:net\n"
			       "add x 10.0.0.0/8 nomatch\n", &in, &said));
	EXPECT_STREQ("1: x: nomatch entries go to an allow set x-nomatch, the name of another set\n",
		     said.text);
	EXPECT_EQ(0, in.nsect);
	ctl_input_free(&in);
}

TEST_HARNESS_MAIN
