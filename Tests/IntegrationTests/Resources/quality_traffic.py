#!/usr/bin/env python3
"""Real TCP traffic for the quality lab tests.

serve PORT ADDR...       accept on each ADDR:PORT, read and discard; prints "ready".
upload PORT CONNS RATE ADDR...
                         CONNS connections to each ADDR:PORT, each sending RATE bytes
                         a second (0: as fast as the path takes them); prints "ready"
                         once every connection is up. Runs until killed.
hold PORT CONNS ADDR...  CONNS idle connections in all, spread over the ADDRs (the
                         benchmark's open connections); prints "ready", runs until killed.
"""
import socket
import sys
import threading
import time


def serve(port, addrs):
    def drain(conn):
        with conn:
            while conn.recv(65536):
                pass

    def accept(listener):
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=drain, args=(conn,), daemon=True).start()

    for addr in addrs:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((addr, port))
        listener.listen(64)
        threading.Thread(target=accept, args=(listener,), daemon=True).start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def upload(port, conns, rate, addrs):
    chunk = b"x" * 16384
    sockets = [socket.create_connection((addr, port), timeout=5) for addr in addrs for _ in range(conns)]

    def send(sock):
        sock.settimeout(None)
        start = time.monotonic()
        sent = 0
        try:
            while True:
                sock.sendall(chunk)
                sent += len(chunk)
                if rate:
                    ahead = sent / rate - (time.monotonic() - start)
                    if ahead > 0:
                        time.sleep(ahead)
        except OSError:
            pass

    for s in sockets:
        threading.Thread(target=send, args=(s,), daemon=True).start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def hold(port, conns, addrs):
    sockets = [socket.create_connection((addrs[i % len(addrs)], port), timeout=5) for i in range(conns)]
    print("ready", len(sockets), flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "serve":
        serve(port, sys.argv[3:])
    elif mode == "hold":
        hold(port, int(sys.argv[3]), sys.argv[4:])
    else:
        upload(port, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
