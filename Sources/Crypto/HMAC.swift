import CCrypto

/// HMAC-SHA256 (RFC 2104) by libcrypto's one-shot `HMAC()`, with the SHA-256 fetched once for `SHA256`.
public enum HMAC {
    /// The 32-byte HMAC-SHA256 of `message` under `key`.
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(key.count <= Int(Int32.max), "an HMAC key of \(key.count) bytes")
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let made = key.withUnsafeBytes { key in
            message.withUnsafeBufferPointer { message in
                output.withUnsafeMutableBufferPointer { out in
                    // Like EVP_Digest, HMAC reads nothing for an empty key or message but wants non-null pointers.
                    CCrypto.HMAC(SHA256.Algorithm.shared.md, key.baseAddress ?? UnsafeRawPointer(out.baseAddress!), Int32(key.count),
                         message.baseAddress ?? UnsafePointer(out.baseAddress!), message.count, out.baseAddress, &length)
                }
            }
        }
        // HMAC() fails only when libcrypto cannot allocate its context (out of memory), as EVP_Digest does in SHA256.
        precondition(made != nil && length == 32, "libcrypto could not compute HMAC-SHA256 (out of memory)")
        return Array(output.prefix(32))
    }
}
