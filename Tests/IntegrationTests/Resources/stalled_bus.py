#!/usr/bin/python3
"""A system bus that lets clients in and then never answers: it authenticates
them (EXTERNAL), answers their Hello with a unique name, and from then on reads
every message and answers none, as a bus stuck under load would.

usage: stalled_bus.py SOCKET LOG

Appends one line per method call it leaves unanswered to LOG ("AddMatch", ...).
Prints "ready" once listening.
"""
import os
import socket
import struct
import sys
import threading

SOCKET, LOG = sys.argv[1], sys.argv[2]
lock = threading.Lock()
counter = [0]


def log(line):
    with lock, open(LOG, "a") as f:
        f.write(line + "\n")


def pad(buf, n):
    while len(buf) % n:
        buf.append(0)


def field(buf, code, sig, value):
    pad(buf, 8)
    buf += bytes([code, 1]) + sig.encode() + b"\0"
    if sig == "u":
        pad(buf, 4)
        buf += struct.pack("<I", value)
    elif sig in "so":
        pad(buf, 4)
        buf += struct.pack("<I", len(value)) + value.encode() + b"\0"
    elif sig == "g":
        buf += bytes([len(value)]) + value.encode() + b"\0"


def hello_reply(serial, name):
    fields = bytearray()
    # Offsets count from the start of the message: the fixed part is 16 bytes.
    fields += b"\0" * 16
    field(fields, 5, "u", serial)
    field(fields, 6, "s", name)
    field(fields, 7, "s", "org.freedesktop.DBus")
    field(fields, 8, "g", "s")
    fields = fields[16:]
    body = struct.pack("<I", len(name)) + name.encode() + b"\0"
    header = bytearray(b"l\x02\x00\x01" + struct.pack("<III", len(body), 1, len(fields)) + fields)
    pad(header, 8)
    return bytes(header) + body


def member(header_fields, endian):
    # Header field 3 (MEMBER), a string.
    i = 0
    while i < len(header_fields):
        i = (i + 7) // 8 * 8
        if i >= len(header_fields):
            break
        code, siglen = header_fields[i], header_fields[i + 1]
        sig = header_fields[i + 2:i + 2 + siglen].decode()
        i += 3 + siglen
        if sig in ("s", "o"):
            i = (i + 3) // 4 * 4
            (n,) = struct.unpack(endian + "I", header_fields[i:i + 4])
            value = header_fields[i + 4:i + 4 + n].decode()
            i += 5 + n
            if code == 3:
                return value
        elif sig == "u":
            i = (i + 3) // 4 * 4 + 4
        elif sig == "g":
            i += 2 + header_fields[i]
        else:
            return "?"
    return "?"


def serve(conn):
    with conn:
        data = b""
        # SASL, line by line, until BEGIN.
        while True:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
            while b"\r\n" in data:
                line, data = data.split(b"\r\n", 1)
                line = line.lstrip(b"\0")
                if line.startswith(b"AUTH"):
                    conn.sendall(b"OK " + os.urandom(16).hex().encode() + b"\r\n")
                elif line.startswith(b"NEGOTIATE_UNIX_FD"):
                    conn.sendall(b"AGREE_UNIX_FD\r\n")
                elif line.startswith(b"BEGIN"):
                    break
            else:
                continue
            break
        with lock:
            counter[0] += 1
            name = ":1.%d" % counter[0]
        while True:
            while len(data) < 16:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            endian = "<" if data[0:1] == b"l" else ">"
            body_len, serial, fields_len = struct.unpack(endian + "III", data[4:16])
            total = 16 + (fields_len + 7) // 8 * 8 + body_len
            while len(data) < total:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            message, data = data[:total], data[total:]
            what = member(message[16:16 + fields_len], endian)
            if what == "Hello":
                conn.sendall(hello_reply(serial, name))
            else:
                log(what)


if __name__ == "__main__":
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(SOCKET)
    server.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
