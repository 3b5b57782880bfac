"""A Kafka proxy that answers chosen produce requests itself with an error (tests).

It sits on the stack's FAULT listener: the broker advertises the proxy's port there
(scripts/stack), so a client bootstrapped at the proxy makes every later connection through it
too. Every request and response passes through unchanged, except the first produce request
that carries a partition of each topic the test names: that one never reaches the broker; the
proxy answers it after @delay_ms with NOT_LEADER_OR_FOLLOWER for each of its partitions, as a
broker does while it is still becoming the leader of a partition it was just given (a topic it
just created, a leader that moved), and with @leaderless names no current leader, as a broker
fenced by its controller does. The answers keep the order of the requests, as Kafka's do.

librdkafka's mock cluster cannot stand in for this: it checks a producer's sequence numbers
more strictly than Kafka, which takes any first sequence number from a producer id the
partition has never seen, and that leniency is what the fault needs to lose records.

The wire format is Kafka's own (ProduceRequest and ProduceResponse, versions 3 to 12); a request
of another version passes through and is counted in `unparsed`, so a test can fail loudly when
nothing was injected. Standard library only.
"""
import asyncio
import struct
import threading
import time

PRODUCE = 0
NOT_LEADER_OR_FOLLOWER = 6


class _Reader:
    def __init__(self, b):
        self.b, self.o = b, 0

    def take(self, n):
        v = self.b[self.o:self.o + n]
        if len(v) != n:
            raise ValueError("short frame")
        self.o += n
        return v

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def uvarint(self):
        shift = v = 0
        while True:
            c = self.take(1)[0]
            v |= (c & 0x7F) << shift
            if not c & 0x80:
                return v
            shift += 7

    def string(self, flexible):
        n = self.uvarint() - 1 if flexible else self.i16()
        return None if n < 0 else self.take(n).decode()

    def skip_bytes(self, flexible):
        n = self.uvarint() - 1 if flexible else self.i32()
        if n > 0:
            self.take(n)

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


def _uvarint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def produce_partitions(frame):
    """(version, correlation id, [(topic, [partition, ...])]) of a ProduceRequest frame (without
    its length), or None when it is not one this module reads (another API, another version)."""
    r = _Reader(frame)
    api, version, corr = r.i16(), r.i16(), r.i32()
    if api != PRODUCE or not 3 <= version <= 12:
        return None
    flexible = version >= 9
    n = r.i16()  # client id: a plain nullable string in every request header
    if n > 0:
        r.take(n)
    if flexible:
        r.skip_tags()
    r.string(flexible)  # transactional id
    r.i16()  # acks
    r.i32()  # timeout
    topics = []
    for _ in range((r.uvarint() - 1) if flexible else r.i32()):
        name = r.string(flexible)
        parts = []
        for _ in range((r.uvarint() - 1) if flexible else r.i32()):
            parts.append(r.i32())
            r.skip_bytes(flexible)
            if flexible:
                r.skip_tags()
        if flexible:
            r.skip_tags()
        topics.append((name, parts))
    return version, corr, topics


def produce_error_response(version, corr, topics, error, leaderless=False):
    """A ProduceResponse frame (with its length) that answers every partition of @topics with
    @error; with @leaderless (version 10 and later), each partition also names its current leader
    as none (CurrentLeader, KIP-951: leader -1, epoch -1), as a broker does while its controller
    has fenced it."""
    flexible = version >= 9
    out = bytearray(struct.pack(">i", corr))
    if flexible:
        out += _uvarint(0)

    def count(n):
        return _uvarint(n + 1) if flexible else struct.pack(">i", n)

    def string(s):
        b = s.encode()
        return (_uvarint(len(b) + 1) if flexible else struct.pack(">h", len(b))) + b

    out += count(len(topics))
    for name, parts in topics:
        out += string(name) + count(len(parts))
        for p in parts:
            out += struct.pack(">ihq", p, error, -1)
            out += struct.pack(">q", -1)  # log append time (v2+)
            if version >= 5:
                out += struct.pack(">q", -1)  # log start offset
            if version >= 8:
                out += count(0)  # record errors
                out += _uvarint(0) if flexible else struct.pack(">h", -1)  # error message
            if flexible and leaderless and version >= 10:
                leader = struct.pack(">ii", -1, -1) + _uvarint(0)  # CurrentLeader, no tags
                out += _uvarint(1) + _uvarint(0) + _uvarint(len(leader)) + leader
            elif flexible:
                out += _uvarint(0)
        if flexible:
            out += _uvarint(0)
    out += struct.pack(">i", 0)  # throttle time
    if flexible:
        out += _uvarint(0)
    return struct.pack(">i", len(out)) + bytes(out)


async def _frame(reader):
    head = await reader.readexactly(4)
    return head, await reader.readexactly(struct.unpack(">i", head)[0])


class KafkaProxy:
    """Listens on 127.0.0.1:@port and forwards to 127.0.0.1:@target in a thread of its own;
    fails the first produce request of each topic in @fail_topics (a set the test may add to
    while it runs) after @delay_ms."""

    def __init__(self, port, target, fail_topics=(), delay_ms=50, leaderless=False):
        self.port, self.target, self.delay = port, target, delay_ms / 1000.0
        self.leaderless = leaderless
        self.fail_topics = set(fail_topics)
        self.failed = {}  # topic -> the partitions answered with the error
        self.produce_requests = 0
        self.unparsed = 0
        self.lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"the Kafka proxy did not listen on {self.port} within 10 s")
        return self

    def stop(self):
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self):
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", self.port))
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()

    def _victim(self, frame):
        """The error response for @frame if it is to fail, else None."""
        try:
            parsed = produce_partitions(frame)
        except ValueError:
            parsed = None
        if frame[:2] == b"\x00\x00":
            with self.lock:
                self.produce_requests += 1
                if parsed is None:
                    self.unparsed += 1
        if parsed is None:
            return None
        version, corr, topics = parsed
        with self.lock:
            hit = [t for t, _ in topics if t in self.fail_topics and t not in self.failed]
            if not hit:
                return None
            for t, parts in topics:
                if t in hit:
                    self.failed[t] = parts
        return produce_error_response(version, corr, topics, NOT_LEADER_OR_FOLLOWER,
                                      self.leaderless)

    async def _client(self, creader, cwriter):
        try:
            breader, bwriter = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            cwriter.close()
            return
        pending = []  # in request order: ("real", corr) or ("fake", bytes, due)
        answers = {}  # the broker's responses by correlation id, not yet written
        wake = asyncio.Event()

        async def upstream():
            while True:
                head, frame = await _frame(creader)
                fake = self._victim(frame)
                if fake is not None:
                    pending.append(("fake", fake, time.monotonic() + self.delay))
                    self._loop.call_later(self.delay, wake.set)
                    continue
                if frame[:2] == b"\x00\x00" and _acks_zero(frame):
                    pass  # no response comes (outboxd never sends acks=0)
                else:
                    pending.append(("real", struct.unpack(">i", frame[4:8])[0]))
                bwriter.write(head + frame)
                await bwriter.drain()

        async def downstream():
            while True:
                head, frame = await _frame(breader)
                answers[struct.unpack(">i", frame[:4])[0]] = head + frame
                wake.set()

        async def pump():
            while True:
                await wake.wait()
                wake.clear()
                while pending:
                    e = pending[0]
                    if e[0] == "real" and e[1] in answers:
                        cwriter.write(answers.pop(e[1]))
                    elif e[0] == "fake" and e[2] <= time.monotonic():
                        cwriter.write(e[1])
                    else:
                        break
                    pending.pop(0)
                await cwriter.drain()

        tasks = [asyncio.ensure_future(c()) for c in (upstream, downstream, pump)]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            t.cancel()
        bwriter.close()
        cwriter.close()


def _acks_zero(frame):
    """Whether a produce request frame says acks=0 (the broker does not answer it)."""
    try:
        r = _Reader(frame)
        r.i16()
        version = r.i16()
        r.i32()
        n = r.i16()
        if n > 0:
            r.take(n)
        if version >= 9:
            r.skip_tags()
        r.string(version >= 9)
        return r.i16() == 0
    except ValueError:
        return False
