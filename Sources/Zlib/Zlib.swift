import CZlib

/// zlib's one-shot deflate and inflate (RFC 1950), for the page models the store keeps compressed. The binary loads
/// libz anyway (Leptonica, qpdf and libpng link it), so this costs no new dependency at run time.
public enum Zlib {
    /// Why bytes could not be inflated.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// `bytes` deflated at `level` (0–9; 6 is zlib's default).
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        var capacity = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                // zlib reads nothing when the count is 0, but it wants a non-null pointer all the same.
                compress2(out.baseAddress, &capacity, input.baseAddress ?? UnsafePointer(out.baseAddress!), uLong(bytes.count), level)
            }
        }
        // compress2 fails only when it cannot allocate its state (out of memory) or on a bad level; the buffer is
        // compressBound's, always large enough.
        precondition(status == Z_OK, "zlib could not compress (\(status))")
        return Array(output.prefix(Int(capacity)))
    }

    /// `bytes` inflated, which must give exactly `size` bytes (the size recorded when they were deflated): a
    /// damaged or truncated stream, or one that would inflate to more, is an error, never a larger buffer.
    public static func decompress(_ bytes: [UInt8], size: Int) throws(Error) -> [UInt8] {
        guard size >= 0 else { throw Error(description: "a negative size") }
        var length = uLong(size)
        var output = [UInt8](repeating: 0, count: max(1, size))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                uncompress(out.baseAddress, &length, input.baseAddress ?? UnsafePointer(out.baseAddress!), uLong(bytes.count))
            }
        }
        switch status {
        case Z_OK where Int(length) == size: return Array(output.prefix(size))
        case Z_OK: throw Error(description: "the stream gives \(length) bytes, not the \(size) recorded")
        case Z_BUF_ERROR: throw Error(description: "the stream is truncated or gives more than the \(size) bytes recorded")
        case Z_DATA_ERROR: throw Error(description: "the stream is damaged")
        default: throw Error(description: "zlib error \(status)")
        }
    }
}
