import Testing
import ZeroMQ

/// The CURVE User-Id a ZAP handler gives a connection, read back with each message received on it.
@Suite("ZeroMQ User-Id")
struct UserIDTests {
    /// Answers one ZAP request on `zap` (RFC 27) with 200 and the client's public key as User-Id.
    /// Returns the key it answered with.
    func answerZAP(_ zap: Socket) throws -> String {
        let request = try #require(try zap.receive(timeoutMilliseconds: 5000))
        #expect(request.count >= 7 && String(decoding: request[5], as: UTF8.self) == "CURVE")
        let key = try #require(Curve.z85Encode(request[6]))
        try zap.send([Array("1.0".utf8), request[1], Array("200".utf8), Array("OK".utf8), Array(key.utf8), []])
        return key
    }

    func client(_ context: Context, server: CurveKeyPair, endpoint: String) throws -> (Socket, CurveKeyPair) {
        let pair = try Curve.generateKeyPair()
        let socket = try Socket(context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.makeCurveClient(CurveClientKeys(serverKey: server.publicKey, pair: pair))
        try socket.connect(endpoint)
        return (socket, pair)
    }

    @Test("a ROUTER reads each connection's ZAP User-Id (the client's key) with its messages; plain sockets have none")
    func userIDPerConnection() throws {
        let context = try Context()
        let zap = try Socket(context, type: .reply)
        try zap.set(.linger, 0)
        try zap.bind("inproc://zeromq.zap.01")
        let server = try Curve.generateKeyPair()
        let router = try Socket(context, type: .router)
        try router.set(.linger, 0)
        try router.makeCurveServer(secretKey: server.secretKey, domain: "test")
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint

        let (first, firstPair) = try client(context, server: server, endpoint: endpoint)
        #expect(try answerZAP(zap) == firstPair.publicKey)
        let (second, secondPair) = try client(context, server: server, endpoint: endpoint)
        #expect(try answerZAP(zap) == secondPair.publicKey)

        try first.send([Array("from first".utf8)])
        try second.send([Array("from second".utf8), Array("two frames".utf8)])
        var seen: [String: String] = [:]
        for _ in 0..<2 {
            let (frames, userID) = try #require(try router.receiveWithUserID(timeoutMilliseconds: 5000))
            seen[String(decoding: frames[1], as: UTF8.self)] = userID
        }
        #expect(seen == ["from first": firstPair.publicKey, "from second": secondPair.publicKey])

        // The same connection keeps its User-Id whatever it sends.
        try first.send([Array("again".utf8)])
        let again = try #require(try router.receiveWithUserID(timeoutMilliseconds: 5000))
        #expect(again.userID == firstPair.publicKey && again.frames.last == Array("again".utf8))

        // No ZAP, no CURVE: a message and no User-Id.
        let plainRouter = try Socket(context, type: .router)
        try plainRouter.set(.linger, 0)
        try plainRouter.bind("tcp://127.0.0.1:*")
        let plain = try Socket(context, type: .dealer)
        try plain.set(.linger, 0)
        try plain.connect(try plainRouter.lastEndpoint)
        try plain.send([Array("clear".utf8)])
        let clear = try #require(try plainRouter.receiveWithUserID(timeoutMilliseconds: 5000))
        #expect(clear.frames.last == Array("clear".utf8))
        #expect(clear.userID == nil)
        // Nothing waiting: nil, as with `receive`.
        #expect(try plainRouter.receiveWithUserID(timeoutMilliseconds: 0) == nil)
    }
}
