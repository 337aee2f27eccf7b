import Testing
import ZeroMQ
import TestSupport
import Foundation

@Suite("ZeroMQ sockets")
struct SocketTests {
    let context: Context

    init() throws { context = try Context() }

    @Test("ROUTER and DEALER exchange multipart messages over inproc")
    func routerDealerInproc() throws {
        let router = try Socket(context, type: .router)
        try router.bind("inproc://router-dealer")
        let dealer = try Socket(context, type: .dealer)
        try dealer.set(.routingID, Array("worker-1".utf8))
        try dealer.connect("inproc://router-dealer")

        try dealer.send([Array("HELLO".utf8), [], [1, 2, 3]])
        let received = try #require(try router.receive(timeoutMilliseconds: 2000))
        #expect(received.count == 4)
        #expect(received[0] == Array("worker-1".utf8))
        #expect(received[1] == Array("HELLO".utf8))
        #expect(received[2] == [])
        #expect(received[3] == [1, 2, 3])

        // Reply by routing id; a 1 MB frame survives intact.
        let big = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try router.send([received[0], Array("JOB".utf8), big])
        let reply = try #require(try dealer.receive(timeoutMilliseconds: 2000))
        #expect(reply.count == 2)
        #expect(reply[1] == big)
    }

    @Test("tcp on 127.0.0.1 with a system-chosen port, read back from lastEndpoint")
    func tcpLoopback() throws {
        let router = try Socket(context, type: .router)
        try router.set(.linger, 0)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let port = Int(endpoint.split(separator: ":").last ?? "") ?? 0
        #expect(port > 0)

        let dealer = try Socket(context, type: .dealer)
        try dealer.set(.linger, 0)
        try dealer.connect(endpoint)
        try dealer.send([Array("ping".utf8)])
        let message = try #require(try router.receive(timeoutMilliseconds: 5000))
        #expect(message.last == Array("ping".utf8))
        try router.send([message[0], Array("pong".utf8)])
        #expect(try dealer.receive(timeoutMilliseconds: 5000) == [Array("pong".utf8)])
    }

    @Test("receive returns nil after its timeout when nothing arrives")
    func receiveTimeout() throws {
        let socket = try Socket(context, type: .pair)
        try socket.bind("inproc://silent")
        let start = Date()
        let message = try socket.receive(timeoutMilliseconds: 150)
        let elapsed = Date().timeIntervalSince(start)
        #expect(message == nil)
        #expect(elapsed >= 0.12)
        #expect(elapsed < 2)
        #expect(try socket.receive(timeoutMilliseconds: 0) == nil)
    }

    @Test("a poller reports which of several sockets is readable")
    func poller() throws {
        let a = try Socket(context, type: .pair)
        let b = try Socket(context, type: .pair)
        try a.bind("inproc://poll-a")
        try b.bind("inproc://poll-b")
        let peerA = try Socket(context, type: .pair)
        let peerB = try Socket(context, type: .pair)
        try peerA.connect("inproc://poll-a")
        try peerB.connect("inproc://poll-b")

        let poller = Poller()
        let indexA = poller.add(a)
        let indexB = poller.add(b)
        #expect(try poller.poll(timeoutMilliseconds: 50) == 0)

        try peerB.send([Array("to b".utf8)])
        #expect(try poller.poll(timeoutMilliseconds: 2000) == 1)
        #expect(!poller.isReadable(indexA))
        #expect(poller.isReadable(indexB))
        #expect(try b.receive(timeoutMilliseconds: 0) == [Array("to b".utf8)])
        #expect(try poller.poll(timeoutMilliseconds: 0) == 0)
    }

    @Test("typed options round-trip")
    func options() throws {
        let socket = try Socket(context, type: .dealer)
        try socket.set(.linger, 250)
        #expect(try socket.get(.linger) == 250)
        try socket.set(.sendHighWaterMark, 5000)
        #expect(try socket.get(.sendHighWaterMark) == 5000)
        try socket.set(.maxMessageSize, 4096)
        #expect(try socket.get(.maxMessageSize) == 4096)
        try socket.set(.routingID, [7, 7, 7])
        #expect(try socket.get(.routingID) == [7, 7, 7])
        try socket.set(.heartbeatInterval, 1000)
        #expect(try socket.get(.heartbeatInterval) == 1000)
        #expect(try socket.get(.type) == SocketType.dealer.rawValue)
    }

    @Test("a peer over the receiver's maxMessageSize is cut off and its message never delivered")
    func maxMessageSize() throws {
        let router = try Socket(context, type: .router)
        try router.set(.maxMessageSize, 1024)
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try Socket(context, type: .dealer)
        try dealer.set(.linger, 0)
        try dealer.connect(try router.lastEndpoint)
        try dealer.send([[UInt8](repeating: 1, count: 10_000)])
        #expect(try router.receive(timeoutMilliseconds: 500) == nil)
    }

    @Test("errors keep the operation and errno")
    func errors() throws {
        let socket = try Socket(context, type: .router)
        #expect(throws: ZMQError.self) { try socket.bind("nonsense://here") }
        do {
            try socket.bind("tcp://127.0.0.1:notaport")
            Issue.record("bind should fail")
        } catch {
            #expect(error.operation.contains("bind tcp://127.0.0.1:notaport"))
            #expect(error.code != 0)
            #expect(!error.message.isEmpty)
        }
        socket.close()
        do {
            try socket.send([[1]])
            Issue.record("send on a closed socket should fail")
        } catch {
            #expect(error.code == ENOTSOCK)
        }
    }

    @Test("two binds to one port: the second fails with EADDRINUSE")
    func addressInUse() throws {
        let first = try Socket(context, type: .router)
        try first.bind("tcp://127.0.0.1:*")
        let second = try Socket(context, type: .router)
        do {
            try second.bind(try first.lastEndpoint)
            Issue.record("second bind should fail")
        } catch {
            #expect(error.code == EADDRINUSE)
        }
    }

    @Test("publish and subscribe with a topic prefix")
    func pubSub() throws {
        let publisher = try Socket(context, type: .publisher)
        try publisher.bind("inproc://news")
        let subscriber = try Socket(context, type: .subscriber)
        try subscriber.subscribe(Array("status".utf8))
        try subscriber.connect("inproc://news")
        // Subscriptions travel asynchronously; publish until one arrives.
        var received: Frames?
        for _ in 0..<50 where received == nil {
            try publisher.send([Array("other".utf8), [0]])
            try publisher.send([Array("status".utf8), [1]])
            received = try subscriber.receive(timeoutMilliseconds: 20)
        }
        #expect(received == [Array("status".utf8), [1]])
    }
}
