"""Listeners for the egress tests' local test hosts (run inside a netns).

    netns_server.py --addr A [--addr B] --tcp 25 --tcp 465 --http 80 \
                    --dns public.isobox.test=198.51.100.10

Every TCP port answers "hello <port>\\n" (HTTP ports answer HTTP 200 with
"isobox-public"); --dns serves A records on UDP port 53 of each address
(other names: NXDOMAIN; other types: no answer). Prints "ready" once every
socket is bound, then serves until killed. Standard library only.
"""
import argparse
import socket
import struct
import sys
import threading


def serve_tcp(sock, port, http):
    while True:
        conn, _ = sock.accept()
        try:
            if http:
                conn.settimeout(5)
                conn.recv(4096)
                body = b"isobox-public\n"
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            else:
                conn.sendall(b"hello %d\n" % port)
        except OSError:
            pass
        finally:
            conn.close()


def answer(query, names):
    """A DNS response for one query (RFC 1035, A records only)."""
    qid, _flags, qdcount = struct.unpack("!HHH", query[:6])
    if qdcount != 1:
        return None
    labels, i = [], 12
    while query[i]:
        n = query[i]
        labels.append(query[i + 1:i + 1 + n].decode("ascii", "replace").lower())
        i += 1 + n
    qtype, _qclass = struct.unpack("!HH", query[i + 1:i + 5])
    question = query[12:i + 5]
    name = ".".join(labels)
    ip = names.get(name)
    if ip is None:
        return struct.pack("!HHHHHH", qid, 0x8183, 1, 0, 0, 0) + question  # NXDOMAIN
    if qtype != 1:
        return struct.pack("!HHHHHH", qid, 0x8180, 1, 0, 0, 0) + question  # no such type
    record = struct.pack("!HHHIH", 0xC00C, 1, 1, 5, 4) + socket.inet_aton(ip)
    return struct.pack("!HHHHHH", qid, 0x8180, 1, 1, 0, 0) + question + record


def serve_dns(sock, names):
    while True:
        data, peer = sock.recvfrom(512)
        try:
            reply = answer(data, names)
        except (IndexError, struct.error):
            reply = None
        if reply:
            sock.sendto(reply, peer)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", action="append", default=[])
    ap.add_argument("--tcp", action="append", type=int, default=[])
    ap.add_argument("--http", action="append", type=int, default=[])
    ap.add_argument("--dns", action="append", default=[])
    args = ap.parse_args()
    names = dict(kv.split("=", 1) for kv in args.dns)
    threads = []
    for addr in args.addr or ["0.0.0.0"]:
        for port, http in [(p, False) for p in args.tcp] + [(p, True) for p in args.http]:
            s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((addr, port))
            s.listen(16)
            threads.append(threading.Thread(target=serve_tcp, args=(s, port, http), daemon=True))
        if names and ":" not in addr:
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.bind((addr, 53))
            threads.append(threading.Thread(target=serve_dns, args=(u, names), daemon=True))
    for t in threads:
        t.start()
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes our stdin (or kills us)


if __name__ == "__main__":
    main()
