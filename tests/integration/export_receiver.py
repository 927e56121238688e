#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The export tests' receiver: takes emberd's OTLP and Pyroscope posts and writes each request
# to DIR (NNNN.body: the body as received; NNNN.meta: method, path, headers as JSON). Its
# behaviour comes from DIR/mode, read at each request: "ok" (200), "503" / "429" / "413" (that
# status; 429 with Retry-After: 1), "413big" (413 for bodies over 4000 bytes, else 200),
# "hang" (read the request, never answer), "trickle" (answer 1 byte a second), "413huge" and
# "200huge" (that status with a body of 2 GiB, sent as fast as it is read; the bytes it could
# send, a line per answer in DIR/sent).
# Usage: export_receiver.py PORT DIR [CERT KEY]: with CERT and KEY, HTTPS that requires a client
# certificate signed by CERT.
import json, os, ssl, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, DIR = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()
seq = [0]


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            return f.read().strip() or "ok"
    except OSError:
        return "ok"


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        m = mode()
        status = 200
        if m in ("503", "429", "413"):
            status = int(m)
        elif m in ("413huge", "200huge"):
            status = int(m[:3])
        elif m == "413big" and len(body) > 4000:
            status = 413
        with lock:
            seq[0] += 1
            name = "%04d" % seq[0]
        meta = {"path": self.path, "headers": dict(self.headers), "status": status,
                "mode": m, "len": len(body), "time": time.time()}
        with open(os.path.join(DIR, name + ".meta"), "w") as f:
            json.dump(meta, f)
        if status == 200 and m not in ("hang", "trickle"):
            with open(os.path.join(DIR, name + ".body"), "wb") as f:
                f.write(body)
        if m == "hang":
            time.sleep(3600)
            return
        if m == "trickle":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(1000):
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(1)
            return
        if m.endswith("huge"):
            self.send_response(status)
            self.send_header("Content-Length", str(2 << 30))
            self.end_headers()
            chunk, sent = b"x" * 65536, 0
            try:
                while sent < 2 << 30:
                    self.wfile.write(chunk)
                    sent += len(chunk)
            except OSError:
                pass
            fd = os.open(os.path.join(DIR, "sent"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(fd, b"%d\n" % sent)
            os.close(fd)
            self.close_connection = True
            return
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "1")
        self.send_header("Content-Length", "0")
        self.end_headers()


ThreadingHTTPServer.daemon_threads = True
srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
if len(sys.argv) > 4:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(sys.argv[3])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
