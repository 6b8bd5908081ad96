# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the bouncer's TLS tests: certs makes, in $T, a CA
# (ca.pem, ca.key), the Local API's certificate for 127.0.0.1
# (server.pem, server.key) and a bouncer's (client.pem, client.key; its
# OU what crowdsec's bouncers_allowed_ou checks), all signed by the CA.
certs() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca \
		-keyout "$T/ca.key" -out "$T/ca.pem" &&
	openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
		-keyout "$T/server.key" -out "$T/server.csr" &&
	printf 'subjectAltName=IP:127.0.0.1\n' >"$T/server.ext" &&
	openssl x509 -req -in "$T/server.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" \
		-CAcreateserial -days 2 -extfile "$T/server.ext" -out "$T/server.pem" &&
	openssl req -newkey rsa:2048 -nodes -subj "/OU=bouncer-ou/CN=cuckoo-bouncer" \
		-keyout "$T/client.key" -out "$T/client.csr" &&
	openssl x509 -req -in "$T/client.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" \
		-CAcreateserial -days 2 -out "$T/client.pem"
}
