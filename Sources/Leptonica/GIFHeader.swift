/// The sizes of a GIF's images, read from its blocks without decoding any pixels.
///
/// Leptonica reads a GIF's "header" by decoding the whole file, and giflib allocates width × height bytes for every
/// image in it at once, so the pixel limit must not ask Leptonica: a small GIF that declares 65535 × 65535 would be
/// decoded, or its memory taken, before the limit could refuse it.
struct GIFHeader {
    /// Size and colour count of the first image: the one Leptonica returns.
    var width: Int
    var height: Int
    var colors: Int
    /// The pixels of all images together: giflib holds every image's pixels while decoding.
    var totalPixels: Int
    var images: Int

    /// Nil when the bytes are not GIF blocks or end before the first image descriptor.
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 13, bytes.starts(with: Array("GIF".utf8)) else { return nil }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func skipSubBlocks(from start: Int) -> Int {
            var at = start
            while at < bytes.count, bytes[at] != 0 { at += Int(bytes[at]) + 1 }
            return at + 1
        }
        let flags = bytes[10]
        let globalColors = flags & 0x80 != 0 ? 1 << (Int(flags & 7) + 1) : 0
        var first: (width: Int, height: Int, colors: Int)?
        var total = 0, images = 0
        var at = 13 + 3 * globalColors
        scan: while at < bytes.count {
            switch bytes[at] {
            case 0x2C:  // image descriptor: left, top, width, height, flags; a local colour table; LZW data
                guard at + 10 <= bytes.count else { break scan }
                let (width, height) = (u16(at + 5), u16(at + 7))
                let local = bytes[at + 9]
                let localColors = local & 0x80 != 0 ? 1 << (Int(local & 7) + 1) : 0
                if first == nil { first = (width, height, localColors > 0 ? localColors : globalColors) }
                total += width * height
                images += 1
                at = skipSubBlocks(from: at + 10 + 3 * localColors + 1)
            case 0x21:  // extension: label, then sub-blocks up to an empty one
                at = skipSubBlocks(from: at + 2)
            default:  // the trailer (0x3B) or bytes that are not a block
                break scan
            }
        }
        guard let first else { return nil }
        (width, height, colors, totalPixels, self.images) = (first.width, first.height, first.colors, total, images)
    }
}
