/// The size of a GIF's first image, read from its blocks without decoding any pixels.
///
/// Leptonica reads a GIF's "header" by decoding the whole image (giflib allocates width × height bytes at once),
/// so the pixel limit must not ask it: a small GIF that declares 65535 × 65535 would be decoded, or its memory
/// taken, before the limit could refuse it.
enum GIFHeader {
    /// Width and height of the first image (what giflib and Leptonica decode), or nil when the bytes end before
    /// its descriptor or are not GIF blocks.
    static func size(of bytes: [UInt8]) -> (width: Int, height: Int, colors: Int)? {
        guard bytes.count >= 13, bytes.starts(with: Array("GIF".utf8)) else { return nil }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        let flags = bytes[10]
        var colors = flags & 0x80 != 0 ? 1 << (Int(flags & 7) + 1) : 0
        var at = 13 + 3 * colors
        while at < bytes.count {
            switch bytes[at] {
            case 0x2C:  // image descriptor: left, top, width, height, flags
                guard at + 10 <= bytes.count else { return nil }
                let local = bytes[at + 9]
                if local & 0x80 != 0 { colors = 1 << (Int(local & 7) + 1) }
                return (u16(at + 5), u16(at + 7), colors)
            case 0x21:  // extension: label, then sub-blocks up to an empty one
                at += 2
                while at < bytes.count, bytes[at] != 0 { at += Int(bytes[at]) + 1 }
                at += 1
            default:
                return nil
            }
        }
        return nil
    }
}
