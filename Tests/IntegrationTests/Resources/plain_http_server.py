#!/usr/bin/env python3
"""Raw HTTP/1.1 check servers for the probe's own client (exact bytes on the wire).

usage: plain_http_server.py MODE HOST PORT LOGFILE

MODE:
  ok          200, Content-Length, "NetworkManager is online"
  nocontent   204 with no body
  chunked     200, Transfer-Encoding: chunked, "NetworkManager is online" in three chunks
  relative    302 with a relative Location ("login?from=probe")
  absolute    302 with an absolute Location (http://portal.example/login)
  garbage     an SSH banner instead of HTTP
  silent      accepts, reads the request, never answers
  cookies     302 with 300 Set-Cookie lines before its Location and Content-Length,
              then keeps the connection open (keep-alive) until the client closes it

Every request's head (request line and header lines, up to the empty line) is
appended to LOGFILE as one line with the header lines joined by " | ".
Prints "ready" once listening.
"""
import socket
import sys
import threading
import time

MODE, HOST, PORT, LOG = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
ONLINE = b"NetworkManager is online\n"
lock = threading.Lock()


def log(line):
    with lock, open(LOG, "a") as f:
        f.write(line + "\n")


def reply(mode):
    if mode == "ok":
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(ONLINE) + ONLINE
    if mode == "nocontent":
        return b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"
    if mode == "chunked":
        return (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"7\r\nNetwork\r\n8;ext=1\r\nManager \r\n0a\r\nis online\n\r\n0\r\n\r\n")
    if mode == "relative":
        return b"HTTP/1.1 302 Found\r\nLocation: login?from=probe\r\nContent-Length: 0\r\n\r\n"
    if mode == "absolute":
        return b"HTTP/1.1 302 Found\r\nLocation: http://portal.example/login\r\nContent-Length: 0\r\n\r\n"
    if mode == "cookies":
        cookies = b"".join(b"Set-Cookie: c%d=%s; Path=/\r\n" % (i, b"x" * 20) for i in range(300))
        return (b"HTTP/1.1 302 Found\r\n" + cookies
                + b"Location: http://portal.example/login\r\nContent-Length: 0\r\n\r\n")
    if mode == "garbage":
        return b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"
    return None


def serve(conn):
    with conn:
        head = b""
        conn.settimeout(10)
        try:
            while b"\r\n\r\n" not in head and len(head) < 65536:
                data = conn.recv(4096)
                if not data:
                    return
                head += data
        except OSError:
            return
        log(" | ".join(head.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")))
        answer = reply(MODE)
        if answer is None:  # silent: hold the connection until the client goes
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass
            return
        try:
            conn.sendall(answer)
            if MODE == "cookies":  # keep-alive: only the framing says the reply is over
                conn.settimeout(30)
                while conn.recv(4096):
                    pass
                return
            conn.shutdown(socket.SHUT_WR)
            time.sleep(0.2)
        except OSError:
            pass


if __name__ == "__main__":
    family = socket.AF_INET6 if ":" in HOST else socket.AF_INET
    server = socket.socket(family, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((HOST, PORT))
    server.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
