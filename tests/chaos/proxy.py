"""A TCP proxy on 127.0.0.1 that the chaos test can cut (standard library only).

Each chime node reaches PostgreSQL through its own Proxy, so that one node
can be cut off from the database while the others are not:

  cut("drop")   like a firewall's DROP rule: nothing is forwarded any more in
                either direction and nothing is answered -- the bytes stay
                unread in the kernel's buffers, new connections are accepted
                by the kernel but get no answer, no reset is sent. Peers find
                out only by their own timeouts.
  cut("reset")  like a REJECT with tcp-reset: every connection is reset (RST)
                at once, and so is every new one.
  heal()        forwarding resumes; connections held by a drop go on where
                they stopped (as after a partition heals before TCP gives up).

One thread per connection (both directions, with select), one for accepting.
"""

import select
import socket
import struct
import threading

PASS, DROP, RESET = "pass", "drop", "reset"


def _reset(sock):
    """Closes sock with an RST rather than a FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


class Proxy:
    def __init__(self, target_port, target_host="127.0.0.1"):
        self.target = (target_host, target_port)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.mode = PASS
        self.lock = threading.Lock()
        self.conns = set()  # (client, upstream or None)
        self.stopped = False
        self.counts = {"accepted": 0, "reset": 0}
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def cut(self, mode):
        assert mode in (DROP, RESET)
        with self.lock:
            self.mode = mode
            if mode == RESET:
                self._reset_all()

    def heal(self):
        with self.lock:
            self.mode = PASS

    def stop(self):
        with self.lock:
            self.stopped = True
            self._reset_all()
        self.listener.close()
        self.thread.join(5)

    def _reset_all(self):
        for client, upstream in list(self.conns):
            _reset(client)
            if upstream is not None:
                _reset(upstream)
            self.counts["reset"] += 1
        self.conns.clear()

    def _accept(self):
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.counts["accepted"] += 1
            threading.Thread(target=self._serve, args=(client,),
                             daemon=True).start()

    def _wait_until_passing(self, pair):
        """Holds a new connection while the proxy drops; False when it was
        reset or the proxy stopped meanwhile."""
        while True:
            with self.lock:
                if self.stopped or self.mode == RESET or pair not in self.conns:
                    return False
                if self.mode == PASS:
                    return True
            threading.Event().wait(0.05)

    def _serve(self, client):
        pair = [client, None]
        key = (client, None)
        with self.lock:
            if self.stopped or self.mode == RESET:
                _reset(client)
                self.counts["reset"] += 1
                return
            self.conns.add(key)
        if not self._wait_until_passing(key):
            return
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            with self.lock:
                self.conns.discard(key)
            _reset(client)
            return
        with self.lock:
            self.conns.discard(key)
            if self.stopped or self.mode == RESET:
                _reset(client)
                _reset(upstream)
                return
            key = (client, upstream)
            self.conns.add(key)
        pair[1] = upstream
        other = {client: upstream, upstream: client}
        try:
            while True:
                with self.lock:
                    if key not in self.conns:
                        return  # reset by cut() or stop()
                    dropping = self.mode == DROP
                if dropping:
                    threading.Event().wait(0.05)
                    continue
                readable, _, _ = select.select(pair, [], [], 0.1)
                for s in readable:
                    data = s.recv(65536)
                    if not data:
                        raise EOFError
                    other[s].sendall(data)
        except (OSError, EOFError, ValueError):
            with self.lock:
                if key in self.conns:
                    self.conns.discard(key)
                    client.close()
                    upstream.close()
