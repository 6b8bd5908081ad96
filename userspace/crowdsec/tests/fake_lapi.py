#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A Local API that answers the decision stream from a script, for
test_cbn_lapi.sh: what crowdsec's own Local API never sends (two decisions
of one address in one answer, a deleted decision repeated after the
address was banned anew, bad JSON, HTTP errors) on cue.

fake_lapi.py ANSWERS PORTFILE LOG [CERT KEY CA]: ANSWERS is a JSON list,
each item the answer to one GET of /v1/decisions/stream in turn:
{"status": N, "body": TEXT}; past the last one, empty answers.  The port
it listens on (on 127.0.0.1) goes to PORTFILE; each request to LOG as
"startup=BOOL KEY USER-AGENT QUERY CLIENT", QUERY the whole query string,
CLIENT the client certificate's subject CN or "-".  With CERT KEY CA it
speaks HTTPS with that certificate and requires a client certificate
signed by CA, as crowdsec's Local API with a tls: block does.
"""
import http.server
import json
import ssl
import sys
import urllib.parse

answers = json.load(open(sys.argv[1]))
log = open(sys.argv[3], "a", buffering=1)


def client_cn(handler):
    """The subject CN of the client's certificate, or "-"."""
    if not isinstance(handler.connection, ssl.SSLSocket):
        return "-"
    cert = handler.connection.getpeercert() or {}
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return value
    return "-"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path != "/v1/decisions/stream":
            self.send_error(404)
            return
        q = urllib.parse.parse_qs(url.query)
        log.write("startup=%s %s %s %s %s\n" % (
            q.get("startup", ["-"])[0], self.headers.get("X-Api-Key"),
            self.headers.get("User-Agent"), url.query, client_cn(self)))
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
if len(sys.argv) > 4:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
    ctx.load_verify_locations(sys.argv[6])
    ctx.verify_mode = ssl.CERT_REQUIRED
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(sys.argv[2], "w") as f:
    f.write("%d\n" % srv.server_address[1])
srv.serve_forever()
