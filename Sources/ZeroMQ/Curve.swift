import CZeroMQ

/// A CURVE key pair as Z85 text (40 characters each).
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: String
    public let secretKey: String

    /// A pair from its two Z85 keys (no check that they belong together; see `Curve.publicKey(forSecret:)`).
    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

/// CURVE key generation and Z85 encoding.
public enum Curve {
    /// A fresh key pair from the library's random source.
    public static func generateKeyPair() throws(ZMQError) -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicKey, &secretKey) == 0 else { throw ZMQError("zmq_curve_keypair") }
        return CurveKeyPair(publicKey: string(publicKey), secretKey: string(secretKey))
    }

    /// The public key that belongs to a Z85 secret key.
    public static func publicKey(forSecret secretKey: String) throws(ZMQError) -> String {
        guard isValidKey(secretKey) else { throw ZMQError("zmq_curve_public", code: EINVAL) }
        var publicKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&publicKey, secretKey) == 0 else { throw ZMQError("zmq_curve_public") }
        return string(publicKey)
    }

    /// Z85 text of 32 bytes (or any multiple of 4).
    public static func z85Encode(_ bytes: [UInt8]) -> String? {
        guard bytes.count % 4 == 0 else { return nil }
        var out = [CChar](repeating: 0, count: bytes.count * 5 / 4 + 1)
        guard zmq_z85_encode(&out, bytes, bytes.count) != nil else { return nil }
        return string(out)
    }

    /// The bytes of Z85 text (length a multiple of 5).
    public static func z85Decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count % 5 == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: text.utf8.count * 4 / 5)
        guard zmq_z85_decode(&out, text) != nil else { return nil }
        return out
    }

    /// A 40-character Z85 key that decodes to 32 bytes.
    public static func isValidKey(_ text: String) -> Bool {
        text.utf8.count == 40 && z85Decode(text)?.count == 32
    }

    private static func string(_ chars: [CChar]) -> String {
        chars.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
