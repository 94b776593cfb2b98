#!/usr/bin/env python3
"""Check-URL servers for the probe's tests and benchmark (never an outside address).

usage: probe_server.py MODE HOST PORT LOGFILE

MODE:
  ok         200 "NetworkManager is online" (+ X-NetworkManager-Status: online)
  redirect   302 to http://HOST:PORT/login, like a captive portal
  wrongbody  200 with a login page
  slow       200, then the body one byte per second (slowloris)
  late       200 "NetworkManager is online", 3 s after the request (a slow but working server)
  huge       200 with a 10 MB body that starts with the expected text
  proxy      an HTTP proxy: answers "NetworkManager is online" to absolute-URI requests
  unavailable  503 Service Unavailable (a check server in trouble)

Every request line is appended to LOGFILE; `huge` also logs "sent N" with the
number of body bytes the client took before it closed the connection.
Prints "ready" once listening.
"""
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE, HOST, PORT, LOG = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
ONLINE = b"NetworkManager is online\n"


def log(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        log(self.requestline)
        if MODE == "ok":
            self.reply(200, ONLINE, [("X-NetworkManager-Status", "online")])
        elif MODE == "late":
            time.sleep(3)
            self.reply(200, ONLINE, [("X-NetworkManager-Status", "online")])
        elif MODE == "redirect":
            self.reply(302, b"", [("Location", f"http://{HOST}:{PORT}/login")])
        elif MODE == "wrongbody":
            self.reply(200, b"<html><title>Welcome to Hotel WiFi</title>please log in</html>\n")
        elif MODE == "slow":
            self.send_response(200)
            self.send_header("Content-Length", str(len(ONLINE)))
            self.end_headers()
            try:
                for byte in ONLINE:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
        elif MODE == "huge":
            size = 10 * 1024 * 1024
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = ONLINE + b"x" * (65536 - len(ONLINE))
            sent = 0
            try:
                while sent < size:
                    self.wfile.write(chunk[: min(len(chunk), size - sent)])
                    sent += min(len(chunk), size - sent)
                    chunk = b"x" * 65536
            except OSError:
                pass
            log(f"sent {sent}")
        elif MODE == "unavailable":
            self.reply(503, b"Service Unavailable\n", [("Retry-After", "10")])
        elif MODE == "proxy":
            if self.path.startswith("http://"):
                self.reply(200, ONLINE)
            else:
                self.reply(400, b"not a proxy request\n")
        else:
            self.reply(500, b"unknown mode\n")


class Server(ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True


if __name__ == "__main__":
    server = Server((HOST, PORT), Handler)
    # A small send buffer so a client that stops reading is noticed quickly.
    server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    print("ready", flush=True)
    server.serve_forever()
