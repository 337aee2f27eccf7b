/// The keys a CURVE client needs: the server's public key and its own pair (all Z85 text).
public struct CurveClientKeys: Sendable, Equatable {
    public let serverKey: String
    public let pair: CurveKeyPair

    public init(serverKey: String, pair: CurveKeyPair) {
        self.serverKey = serverKey
        self.pair = pair
    }
}

extension Socket {
    /// Makes this socket a CURVE server with `secretKey`; clients are then checked by the ZAP handler of its
    /// context under `domain`. Call before `bind`.
    public func makeCurveServer(secretKey: String, domain: String) throws(ZMQError) {
        try set(.curveServer, true)
        try set(.curveSecretKey, secretKey)
        try set(.zapDomain, domain)
    }

    /// Makes this socket a CURVE client of the server with `keys.serverKey`. Call before `connect`.
    public func makeCurveClient(_ keys: CurveClientKeys) throws(ZMQError) {
        try set(.curveServerKey, keys.serverKey)
        try set(.curvePublicKey, keys.pair.publicKey)
        try set(.curveSecretKey, keys.pair.secretKey)
    }
}
