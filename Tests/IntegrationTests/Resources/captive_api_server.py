#!/usr/bin/env python3
"""A captive-portal API (RFC 8908) for the captive-portal tests (never an outside address).

usage: captive_api_server.py CERT KEY HOST PORT ANSWERFILE LOGFILE

Answers every GET over TLS with CERT/KEY with the bytes of ANSWERFILE, read
afresh for each request (the test rewrites it: captive, then not, then
expired), as application/captive+json. ANSWERFILE may instead hold one line
"huge N": N bytes of JSON-looking padding. Appends each request line and its
Accept header to LOGFILE, prints "ready" once listening.
"""
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, HOST, PORT, ANSWER, LOG = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        with open(LOG, "a") as f:
            f.write("%s accept=%s\n" % (self.requestline, self.headers.get("Accept", "")))
        with open(ANSWER, "rb") as f:
            body = f.read()
        huge = 0
        if body.startswith(b"huge "):
            huge = int(body.split()[1])
        self.send_response(200)
        self.send_header("Content-Type", "application/captive+json")
        self.send_header("Cache-Control", "private")
        self.send_header("Content-Length", str(huge or len(body)))
        self.end_headers()
        try:
            if huge:
                chunk = b'{"captive": true, "pad": "' + b"x" * 65000
                sent = 0
                while sent < huge:
                    part = chunk[: huge - sent]
                    self.wfile.write(part)
                    sent += len(part)
            else:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass


server = ThreadingHTTPServer((HOST, PORT), Handler)
server.daemon_threads = True
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print("ready", flush=True)
server.serve_forever()
