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

    /// A digest computed piece by piece: the bytes of a file fed as they are read, so they are hashed once, while
    /// still in cache, and need not all be in memory.
    public final class Hasher {
        // Owned: made by EVP_MD_CTX_new here, freed by EVP_MD_CTX_free in deinit. Not Sendable: one thread feeds it.
        private let context: OpaquePointer
        private var finished = false

        public init() {
            // As in `digest`: these fail only when libcrypto cannot allocate, where the process cannot go on either.
            guard let context = EVP_MD_CTX_new() else { preconditionFailure("libcrypto could not allocate a digest (out of memory)") }
            self.context = context
            precondition(EVP_DigestInit_ex(context, Algorithm.shared.md, nil) == 1, "libcrypto could not start SHA-256")
        }

        deinit { EVP_MD_CTX_free(context) }

        /// Adds the bytes in `buffer`.
        public func update(_ buffer: UnsafeRawBufferPointer) {
            precondition(!finished, "SHA256.Hasher fed after finish()")
            guard let base = buffer.baseAddress, buffer.count > 0 else { return }
            precondition(EVP_DigestUpdate(context, base, buffer.count) == 1, "libcrypto could not compute SHA-256")
        }

        /// The 32-byte digest of everything added; the hasher takes no more bytes after it.
        public func finish() -> [UInt8] {
            precondition(!finished, "SHA256.Hasher finished twice")
            finished = true
            var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            let ok = output.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
            precondition(ok == 1 && length == 32, "libcrypto could not compute SHA-256")
            return Array(output.prefix(32))
        }
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
    final class Algorithm: @unchecked Sendable {
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
