# SPDX-License-Identifier: MIT
# Attack clients for tests/integration/test_attack_*.sh, and the liveness prober that
# measures what they cost. Every attack runs for SECONDS and keeps its pressure up: a connection
# the server closes is opened again.
#
#   attack.py probe URL SECONDS [CAFILE]      /healthz every 100 ms on a fresh connection: prints
#                                             "probes N failed F median_ms M max_ms X"
#   attack.py idle HOST PORT N SECONDS        N connections that never send a byte
#   attack.py loris HOST PORT N SECONDS       N connections trickling a request's headers, a byte
#                                             every 0.5 s
#   attack.py tlshalf HOST PORT N SECONDS     N connections that start a TLS handshake (the first
#                                             bytes of a ClientHello) and never finish it
#   attack.py slowread URL N SECONDS RATE     N clients of one URL reading RATE bytes/s each
#   attack.py abandon URL N WAIT PATHS...     N requests (PATHS in turn, {k} replaced by the
#                                             request's number), every connection closed WAIT
#                                             seconds after the requests were sent (abandon-rst:
#                                             reset)
#   attack.py concurrent URL N PATH_FMT [RATE [SECONDS]]
#                                             N concurrent requests of PATH_FMT % i, read fast (or
#                                             at RATE bytes/s each, for SECONDS at most): prints
#                                             "codes {...} retry_after R"
# All print one summary line on stdout.
import resource, socket, ssl, statistics, sys, threading, time, urllib.parse

def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    except (ValueError, OSError):
        pass

def split(url):
    u = urllib.parse.urlsplit(url)
    return u.scheme, u.hostname, u.port, (u.path or "/") + ("?" + u.query if u.query else "")

def probe(url, secs, cafile=None):
    scheme, host, port, _ = split(url)
    ctx = None
    if scheme == "https":
        ctx = ssl.create_default_context(cafile=cafile)
    lat, failed, end, why = [], 0, time.time() + secs, []
    family, _, _, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    while time.time() < end:
        t0 = time.monotonic()
        try:
            # as curl does: everything set up before the connect, so that the first bytes (the
            # request, or the ClientHello) follow it at once. A socket wrapped after
            # create_connection() sent its ClientHello a few ms after the connect when the
            # attacker's process held the CPU, and a flood of silent connections from this
            # address turns the address's slots over in a few ms: the probe, still silent,
            # was closed as one of them (fresh-clone runs, about 1 in 77 TLS probes)
            s = socket.socket(family, socket.SOCK_STREAM)
            # the request is not held back by Nagle behind the TLS Finished
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.settimeout(5)
            if ctx:
                s = ctx.wrap_socket(s, server_hostname=host)  # the handshake at connect()
            s.connect(addr)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while not data.endswith(b"ok\n"):
                d = s.recv(4096)
                if not d:
                    break
                data += d
            s.close()
            if data.startswith(b"HTTP/1.1 200") and data.endswith(b"ok\n"):
                lat.append((time.monotonic() - t0) * 1000)
            else:
                failed += 1
                why.append("%.0f ms: answer %r" % ((time.monotonic() - t0) * 1000, data[:80]))
        except OSError as e:
            failed += 1
            why.append("%.0f ms: %s" % ((time.monotonic() - t0) * 1000, repr(e)))
        time.sleep(0.1)
    for w in why:  # on stderr: stdout is the summary line the tests parse
        print("# probe failed after %s" % w, file=sys.stderr, flush=True)
    print("probes %d failed %d median_ms %.1f max_ms %.1f" % (len(lat) + failed, failed,
          statistics.median(lat) if lat else -1, max(lat) if lat else -1), flush=True)

def hold(host, port, n, secs, first_bytes, trickle):
    """n connections; each sends first_bytes, then trickle one byte every 0.5 s; reopened when
    closed. Counts how many times the server closed one."""
    raise_nofile()
    conns = [None] * n
    pos = [0] * n
    closed = opened = 0
    end = time.time() + secs
    def connect(i):
        nonlocal opened
        try:
            s = socket.create_connection((host, port), timeout=2)
            s.setblocking(False)
            conns[i] = s
            pos[i] = 0
            opened += 1
        except OSError:
            conns[i] = None
    for i in range(n):
        connect(i)
    sent_first = [False] * n
    while time.time() < end:
        for i in range(n):
            s = conns[i]
            if s is None:
                connect(i)
                continue
            try:
                if not sent_first[i] and first_bytes:
                    s.send(first_bytes)
                    sent_first[i] = True
                if trickle and pos[i] < len(trickle):
                    s.send(trickle[pos[i]:pos[i] + 1])
                    pos[i] += 1
                d = s.recv(1)  # nothing comes unless the server closes (or answers)
                if d == b"":
                    raise ConnectionResetError()
            except BlockingIOError:
                continue
            except OSError:
                closed += 1
                s.close()
                sent_first[i] = False
                connect(i)
        time.sleep(0.5 if trickle else 0.2)
    print("opened %d closed_by_server %d" % (opened, closed), flush=True)

def slowread(url, n, secs, rate):
    _, host, port, path = split(url)
    got, status = [0] * n, [None] * n
    end = time.time() + secs
    go = threading.Barrier(n)
    def one(k):
        try:
            s = socket.create_connection((host, port), timeout=30)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            go.wait()  # all at once: identical requests within one render
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
            while time.time() < end:
                d = s.recv(int(rate / 10))
                if not d:
                    break
                if status[k] is None:
                    status[k] = d[:12].decode(errors="replace")
                got[k] += len(d)
                time.sleep(0.1)
            s.close()
        except OSError as e:
            status[k] = str(e)
    ts = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]
    codes = {}
    for st in status:
        codes[str(st)] = codes.get(str(st), 0) + 1
    print("readers %d bytes %d statuses %s" % (n, sum(got), codes), flush=True)

def abandon(url, n, paths, wait=0.2, rst=False):
    _, host, port, _ = split(url)
    socks = []
    for k in range(n):
        path = paths[k % len(paths)].replace("{k}", str(k))
        try:
            s = socket.create_connection((host, port), timeout=5)
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
            socks.append(s)
        except OSError:
            pass
    time.sleep(wait)
    for s in socks:
        if rst:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()  # FIN, or RST: whatever was answered stays unread
    print("abandoned %d" % len(socks), flush=True)

def concurrent(url, n, fmt, rate=0, secs=60):
    _, host, port, _ = split(url)
    codes, retry = {}, [0]
    lock = threading.Lock()
    end = time.time() + secs
    def one(k):
        path = fmt % k
        code = "error"
        try:
            s = socket.create_connection((host, port), timeout=60)
            s.settimeout(60)
            if rate:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
            data = b""
            while time.time() < end:
                d = s.recv(int(rate / 10) if rate else 1 << 20)
                if not d:
                    break
                data += d[:4096] if len(data) < 4096 else b""
                if rate:
                    time.sleep(0.1)
            s.close()
            code = data[9:12].decode()
            if b"\r\nRetry-After:" in data.split(b"\r\n\r\n")[0]:
                with lock:
                    retry[0] += 1
        except OSError:
            pass
        with lock:
            codes[code] = codes.get(code, 0) + 1
    ts = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]
    print("codes %s retry_after %d" % (codes, retry[0]), flush=True)

# A TLS record header and the start of a ClientHello: the server waits for the rest.
CLIENT_HELLO_START = bytes.fromhex("160301020001") + b"\x00\x01\xfc\x03\x03"

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "probe":
        probe(sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    elif mode == "idle":
        hold(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), b"", b"")
    elif mode == "loris":
        req = b"GET /api/v1/folded HTTP/1.1\r\nHost: x\r\nX-a: " + b"b" * 4000
        hold(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), b"", req)
    elif mode == "tlshalf":
        hold(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
             CLIENT_HELLO_START, b"")
    elif mode == "slowread":
        slowread(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]))
    elif mode in ("abandon", "abandon-rst"):
        abandon(sys.argv[2], int(sys.argv[3]), sys.argv[5:], float(sys.argv[4]),
                mode == "abandon-rst")
    elif mode == "concurrent":
        concurrent(sys.argv[2], int(sys.argv[3]), sys.argv[4],
                   float(sys.argv[5]) if len(sys.argv) > 5 else 0,
                   float(sys.argv[6]) if len(sys.argv) > 6 else 60)
