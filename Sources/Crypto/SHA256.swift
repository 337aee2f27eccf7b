import CCrypto

/// SHA-256 by libcrypto, the content hash of submitted files.
///
/// libcrypto's assembly (SHA-NI or AVX2 here) hashes about 1.3 GB/s on this machine; the Swift implementation it
/// replaced did 240 MB/s and was 86% of `submit`'s CPU. The binary loads libcrypto anyway (libzmq's CURVE and
/// libqpdf link it), so this costs no new dependency at run time.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { digest($0) }
    }

    /// The 32-byte digest of the bytes in `buffer`.
    public static func digest(_ buffer: UnsafeRawBufferPointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out in
            // EVP_Digest reads nothing when the count is 0, but it wants a non-null pointer all the same.
            EVP_Digest(buffer.baseAddress ?? UnsafeRawPointer(out.baseAddress!), buffer.count, out.baseAddress, &length,
                       Algorithm.shared.md, nil)
        }
        // EVP_Digest fails only when it cannot allocate its context: the process is out of memory, where Swift's own
        // allocations trap the same way. There is no digest to return and no caller that could go on without one.
        precondition(ok == 1 && length == 32, "libcrypto could not compute SHA-256 (out of memory)")
        return Array(output.prefix(32))
    }

    /// The lowercase hex digest of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        hex(digest: digest(bytes))
    }

    /// Lowercase hex of a digest.
    public static func hex(digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The algorithm fetched once: with OpenSSL 3 every implicit `EVP_sha256()` use fetches it from the provider
    /// again, under a lock, which costs more than hashing a small file.
    private final class Algorithm: @unchecked Sendable {
        // Owned for the life of the process (a static); libcrypto documents a fetched EVP_MD as safe to share
        // between threads.
        let md: OpaquePointer

        private init() {
            // Fetching fails only when the default provider cannot load, i.e. a broken libcrypto installation.
            guard let md = EVP_MD_fetch(nil, "SHA256", nil) else {
                preconditionFailure("libcrypto has no SHA256 (its default provider did not load)")
            }
            self.md = md
        }

        static let shared = Algorithm()
    }
}
