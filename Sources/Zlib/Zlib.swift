import CZlib

/// zlib's one-shot deflate and inflate (RFC 1950), for the page models the store keeps compressed. The binary loads
/// libz anyway (Leptonica, qpdf and libpng link it), so this costs no new dependency at run time.
public enum Zlib {
    /// Why bytes could not be inflated.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// `bytes` deflated at `level` (0–9; 6 is zlib's default), as a zlib stream any inflater reads.
    ///
    /// The window and hash table are sized to the input (`windowBits` 9–15): `compress2`'s fixed 256 KB of state,
    /// allocated and its hash table cleared for every call, cost more than deflating a small page model (the
    /// coordinator packs one with every result). A window as long as the input finds every match the full one would.
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        var windowBits: Int32 = 9
        while windowBits < 15 && (1 << windowBits) < bytes.count + 262 { windowBits += 1 }
        let memoryLevel = max(1, min(8, windowBits - 7))
        var stream = z_stream()
        let initialized = deflateInit2_(&stream, level, Z_DEFLATED, windowBits, memoryLevel, Z_DEFAULT_STRATEGY, zlibVersion(),
                                        Int32(MemoryLayout<z_stream>.size))
        // deflateInit2 fails only when it cannot allocate its state (out of memory) or on a bad level.
        precondition(initialized == Z_OK, "zlib could not start deflating (\(initialized))")
        defer { deflateEnd(&stream) }
        let capacity = Int(deflateBound(&stream, uLong(bytes.count)))
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { out, count in
            var status: Int32 = Z_OK
            bytes.withUnsafeBufferPointer { input in
                // zlib reads nothing when the count is 0, but it wants a non-null pointer all the same.
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress ?? UnsafePointer(out.baseAddress!))
                stream.avail_in = uInt(bytes.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(capacity)
                status = deflate(&stream, Z_FINISH)
            }
            // The buffer is deflateBound's, always large enough for one call to finish.
            precondition(status == Z_STREAM_END, "zlib could not compress (\(status))")
            count = Int(stream.total_out)
        }
        return output
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
