import Testing
import ZeroMQ

@Suite("ZeroMQ CURVE")
struct CurveTests {
    @Test("key pairs are 40-character Z85 keys and the public key derives from the secret")
    func keyPairs() throws {
        #expect(Context.has("curve"))
        let pair = try Curve.generateKeyPair()
        #expect(pair.publicKey.count == 40)
        #expect(pair.secretKey.count == 40)
        #expect(Curve.isValidKey(pair.publicKey))
        #expect(try Curve.publicKey(forSecret: pair.secretKey) == pair.publicKey)
        #expect(try Curve.generateKeyPair() != pair)
        #expect(!Curve.isValidKey("too short"))
    }

    @Test("Z85 round-trips 32 bytes")
    func z85() throws {
        let bytes = (0..<32).map { UInt8($0 * 7) }
        let text = try #require(Curve.z85Encode(bytes))
        #expect(text.count == 40)
        #expect(Curve.z85Decode(text) == bytes)
        #expect(Curve.z85Encode([1, 2, 3]) == nil)
    }

    @Test("an encrypted connection works with the right server key and carries nothing with a wrong one")
    func encryptedConnection() throws {
        let context = try Context()
        let server = try Curve.generateKeyPair()
        let client = try Curve.generateKeyPair()

        let router = try Socket(context, type: .router)
        try router.set(.curveServer, true)
        try router.set(.curveSecretKey, server.secretKey)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint

        let good = try Socket(context, type: .dealer)
        try good.set(.linger, 0)
        try good.set(.curveServerKey, server.publicKey)
        try good.set(.curvePublicKey, client.publicKey)
        try good.set(.curveSecretKey, client.secretKey)
        try good.connect(endpoint)
        try good.send([Array("secret page".utf8)])
        let message = try #require(try router.receive(timeoutMilliseconds: 5000))
        #expect(message.last == Array("secret page".utf8))
        #expect(try router.get(.mechanism) == 2)

        let impostor = try Curve.generateKeyPair()
        let bad = try Socket(context, type: .dealer)
        try bad.set(.linger, 0)
        try bad.set(.curveServerKey, impostor.publicKey)
        try bad.set(.curvePublicKey, client.publicKey)
        try bad.set(.curveSecretKey, client.secretKey)
        try bad.connect(endpoint)
        try bad.send([Array("should not arrive".utf8)])
        #expect(try router.receive(timeoutMilliseconds: 500) == nil)
    }
}
