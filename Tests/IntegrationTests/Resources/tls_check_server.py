#!/usr/bin/env python3
"""An HTTPS check server for the probe's TLS test (never an outside address).

usage: tls_check_server.py CERT KEY HOST PORT LOGFILE

Answers every GET with 200 "NetworkManager is online" over TLS with CERT/KEY,
appends each request line to LOGFILE, prints "ready" once listening.
"""
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, HOST, PORT, LOG = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
ONLINE = b"NetworkManager is online\n"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        with open(LOG, "a") as f:
            f.write(self.requestline + "\n")
        self.send_response(200)
        self.send_header("Content-Length", str(len(ONLINE)))
        self.end_headers()
        self.wfile.write(ONLINE)


server = ThreadingHTTPServer((HOST, PORT), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print("ready", flush=True)
server.serve_forever()
