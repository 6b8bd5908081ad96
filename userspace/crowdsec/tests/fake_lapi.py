#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A Local API that answers the decision stream from a script, for
test_cbn_lapi.sh: what crowdsec's own Local API never sends (two decisions
of one address in one answer, a deleted decision repeated after the
address was banned anew, bad JSON, HTTP errors) on cue.

fake_lapi.py ANSWERS PORTFILE LOG: ANSWERS is a JSON list, each item the
answer to one GET of /v1/decisions/stream in turn: {"status": N, "body":
TEXT}; past the last one, empty answers.  The port it listens on (on
127.0.0.1) goes to PORTFILE; each request to LOG as "startup=BOOL KEY
USER-AGENT".
"""
import http.server
import json
import sys
import urllib.parse

answers = json.load(open(sys.argv[1]))
log = open(sys.argv[3], "a", buffering=1)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path != "/v1/decisions/stream":
            self.send_error(404)
            return
        q = urllib.parse.parse_qs(url.query)
        log.write("startup=%s %s %s\n" % (q.get("startup", ["-"])[0],
                                          self.headers.get("X-Api-Key"),
                                          self.headers.get("User-Agent")))
        a = answers.pop(0) if answers else {
            "status": 200, "body": '{"deleted":null,"new":null}'}
        body = a["body"].encode()
        self.send_response(a["status"])
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2], "w") as f:
    f.write("%d\n" % srv.server_address[1])
srv.serve_forever()
