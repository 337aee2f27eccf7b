import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

/// A page image made ready for a PDF image XObject: from a file without loss (`Pix.pdfImage(of:)`: the file's own
/// JPEG or JPEG 2000 bytes, or its pixels exactly, Flate with PNG predictors where they make it smaller, Group 4
/// for bilevel), or a processed page compressed (`Pix.compressedForPDF`).
public struct PDFPageImage: Sendable {
    public enum Encoding: Sendable {
        /// The file's JPEG bytes as they are (DCTDecode).
        case jpeg
        /// The file's JPEG 2000 (JP2) bytes as they are (JPXDecode, which carries its own color space).
        case jpeg2000
        /// CCITT Group 4 (CCITTFaxDecode, K -1).
        case group4
        /// zlib (FlateDecode), with a PNG predictor byte before each row when `predictor` is set.
        case flate
    }

    /// How the image survived.
    public enum Kept: Sendable, Equatable {
        /// The file's compressed bytes, copied.
        case copied
        /// Decoded and compressed again; every pixel the same.
        case lossless
        /// Decoded and converted for the PDF (the reason says what was lost and why).
        case converted(String)
    }

    public let bytes: [UInt8]
    public let encoding: Encoding
    public let width: Int
    public let height: Int
    public let bitsPerComponent: Int
    /// 1 (gray or palette indices) or 3 (RGB); for JPEG 2000, the file's.
    public let components: Int
    public let predictor: Bool
    /// For a palette image: the palette as a PDF hex string (`<RRGGBB...>`) and its size.
    public let palette: (hex: String, count: Int)?
    public let kept: Kept
}

extension Pix {
    /// The image of `bytes` (page `page` of a TIFF) as a PDF keeps it without loss: JPEG (gray or RGB) and JP2 bytes
    /// copied, a PNG's compressed rows too (`PNGStream`); other formats decoded and compressed exactly (`losslessForPDF`). What a PDF/A page cannot hold as
    /// the file has it is converted and says so: CMYK and YCCK JPEGs become RGB pixels, alpha is laid on white
    /// (PDF/A-2 allows soft masks, but a scan's alpha is a side effect of the tool that wrote it), 16-bit samples
    /// become 8-bit (Leptonica reads them so).
    public static func pdfImage(of bytes: [UInt8], page: Int = 0, maxPixels: Int? = nil) throws(LeptonicaError) -> PDFPageImage {
        LeptonicaLibrary.prepare()
        let format = ImageFormat.sniff(bytes)
        var reasons: [String] = []
        if format == .jpeg {
            var w: Int32 = 0, h: Int32 = 0, spp: Int32 = 0, ycck: Int32 = 0, cmyk: Int32 = 0
            let rc = bytes.withUnsafeBufferPointer { readHeaderMemJpeg($0.baseAddress, $0.count, &w, &h, &spp, &ycck, &cmyk) }
            _ = LeptonicaMessages.take()
            if rc == 0, w > 0, h > 0, spp == 1 || spp == 3, ycck == 0, cmyk == 0,
               Int(w) * Int(h) <= maxPixels ?? Int.max
            {
                return PDFPageImage(bytes: bytes, encoding: .jpeg, width: Int(w), height: Int(h), bitsPerComponent: 8,
                                    components: Int(spp), predictor: false, palette: nil, kept: .copied)
            }
            reasons.append(cmyk != 0 || ycck != 0 || spp == 4 ? "a CMYK JPEG as RGB (PDF/A's sRGB output intent takes no CMYK)"
                : "a JPEG decoded (its header was not usable as it is)")
        }
        if format == .jpeg2000, let header = try? Self.header(of: bytes), bytes.count > 12, bytes[4...7].elementsEqual(Array("jP  ".utf8)),
           header.pixelCount <= maxPixels ?? Int.max
        {
            // A JP2 file (the boxed format PDF takes; a bare codestream would be taken too, but says nothing of its colors).
            return PDFPageImage(bytes: bytes, encoding: .jpeg2000, width: header.width, height: header.height,
                                bitsPerComponent: header.bitsPerSample, components: header.samplesPerPixel, predictor: false,
                                palette: nil, kept: .copied)
        }
        if format == .png, let png = PNGStream(bytes), png.width * png.height <= maxPixels ?? Int.max {
            // A bilevel PNG: Group 4 when that is smaller (it nearly always is).
            if png.bitDepth == 1 && png.colorType == 0, let g4 = try? Pix(encoded: bytes).losslessForPDF(), g4.bytes.count < png.data.count {
                return g4
            }
            return png.pdfImage
        }
        let header = try? Self.header(of: bytes, page: page)
        var image = try Pix(encoded: bytes, page: page, maxPixels: maxPixels)
        if image.depth == 32 && image.samplesPerPixel == 4 {
            image = try image.alphaOnWhite()
            reasons.append("alpha laid on white")
        }
        if image.depth == 16 {
            image = try image.grayscale()
            reasons.append("16-bit samples as 8-bit")
        } else if let header, header.bitsPerSample == 16 {
            reasons.append("16-bit samples as 8-bit")
        }
        let lossless = try image.losslessForPDF()
        guard !reasons.isEmpty else { return lossless }
        return PDFPageImage(bytes: lossless.bytes, encoding: lossless.encoding, width: lossless.width, height: lossless.height,
                            bitsPerComponent: lossless.bitsPerComponent, components: lossless.components,
                            predictor: lossless.predictor, palette: lossless.palette, kept: .converted(reasons.joined(separator: ", ")))
    }

    /// This image compressed for a PDF with every pixel kept: bilevel as Group 4, a palette image as its indices
    /// and palette (Flate), gray and RGB as Flate, with PNG predictors (the best of the five per row, as PNG
    /// encoders choose) when that is smaller than without.
    public func losslessForPDF() throws(LeptonicaError) -> PDFPageImage {
        LeptonicaLibrary.prepare()
        if depth == 1 && !hasColormap {
            let g4 = try compressedForPDF()
            return PDFPageImage(bytes: g4.bytes, encoding: .group4, width: width, height: height, bitsPerComponent: 1,
                                components: 1, predictor: false, palette: nil, kept: .lossless)
        }
        guard depth == 32 || [1, 2, 4, 8].contains(depth) else {
            throw LeptonicaError("pdf image", message: "cannot keep a \(depth)-bit image losslessly")
        }
        var palette: (String, Int)?
        if hasColormap {
            let flate = try compressedForPDF()
            palette = flate.palette
        }
        var data: UnsafeMutablePointer<UInt8>?
        var count = 0
        guard pixGetRasterData(pointer, &data, &count) == 0, let data, count > 0 else {
            throw LeptonicaError.captured("pixGetRasterData", fallback: "cannot read the pixels of a \(width)x\(height) image")
        }
        defer { free(data) }
        let raster = UnsafeBufferPointer(start: data, count: count)
        let components = depth == 32 ? 3 : 1
        let bits = depth == 32 ? 8 : depth
        let rowBytes = (width * components * bits + 7) / 8
        guard rowBytes * height == count else {
            throw LeptonicaError("pdf image", message: "unexpected raster size \(count) for \(width)x\(height)x\(depth)")
        }
        let plain = try Zlib.compress(Array(raster))
        // Palette indices and packed bits gain little from predictors (they work on whole bytes).
        if bits == 8 {
            let filtered = PNGPredictor.filtered(raster, rowBytes: rowBytes, bytesPerPixel: components)
            let predicted = try Zlib.compress(filtered)
            if predicted.count < plain.count {
                return PDFPageImage(bytes: predicted, encoding: .flate, width: width, height: height, bitsPerComponent: 8,
                                    components: components, predictor: true, palette: palette, kept: .lossless)
            }
        }
        return PDFPageImage(bytes: plain, encoding: .flate, width: width, height: height, bitsPerComponent: bits,
                            components: components, predictor: false, palette: palette, kept: .lossless)
    }

    /// An RGBA image laid on white (RGB).
    func alphaOnWhite() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixAlphaBlendUniform", pixAlphaBlendUniform(pointer, 0xFFFF_FF00))
    }
}

/// A PNG's compressed rows as a PDF Flate stream takes them (`/Predictor 15` undoes PNG's row filters), as img2pdf
/// and OCRmyPDF keep a PNG: for non-interlaced gray, RGB and palette PNGs of up to 16 bits without transparency (an
/// alpha channel or `tRNS` needs decoding; PDF/A-2 takes 16-bit samples as they are).
struct PNGStream {
    let width: Int, height: Int, bitDepth: Int, colorType: Int
    let data: [UInt8]
    let palette: [UInt8]

    init?(_ bytes: [UInt8]) {
        guard bytes.count > 33, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        func integer(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        var offset = 8
        var header: (width: Int, height: Int, depth: Int, color: Int, interlace: Int)?
        var data: [UInt8] = [], palette: [UInt8] = []
        var ended = false
        while offset + 12 <= bytes.count {
            let length = integer(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let body = offset + 8
            guard length >= 0, body + length + 4 <= bytes.count else { return nil }
            switch type {
            case "IHDR" where length >= 13:
                header = (integer(body), integer(body + 4), Int(bytes[body + 8]), Int(bytes[body + 9]), Int(bytes[body + 12]))
            case "PLTE": palette = Array(bytes[body..<(body + length)])
            case "IDAT": data += bytes[body..<(body + length)]
            case "tRNS": return nil
            case "IEND": ended = true
            default: break
            }
            if ended { break }
            offset = body + length + 4
        }
        guard ended, let header, header.width > 0, header.height > 0, header.interlace == 0, !data.isEmpty,
              [0, 2, 3].contains(header.color), [1, 2, 4, 8, 16].contains(header.depth),
              header.color != 3 || (header.depth <= 8 && palette.count >= 3 && palette.count % 3 == 0),
              header.color != 2 || header.depth >= 8
        else { return nil }
        (width, height, bitDepth, colorType) = (header.width, header.height, header.depth, header.color)
        self.data = data
        self.palette = palette
    }

    var pdfImage: PDFPageImage {
        let components = colorType == 2 ? 3 : 1
        let hex = palette.map { byte in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined()
        return PDFPageImage(bytes: data, encoding: .flate, width: width, height: height, bitsPerComponent: bitDepth,
                            components: components, predictor: true,
                            palette: colorType == 3 ? ("<" + hex + ">", palette.count / 3) : nil, kept: .copied)
    }
}

/// PNG's row filters (RFC 2083 §6), chosen per row by the smallest sum of absolute differences, as libpng does:
/// what a PDF's FlateDecode with `/Predictor 15` undoes.
enum PNGPredictor {
    static func filtered(_ raster: UnsafeBufferPointer<UInt8>, rowBytes: Int, bytesPerPixel bpp: Int) -> [UInt8] {
        let rows = raster.count / rowBytes
        var out = [UInt8](repeating: 0, count: rows * (rowBytes + 1))
        var candidate = [[UInt8]](repeating: [UInt8](repeating: 0, count: rowBytes), count: 5)
        let zero = [UInt8](repeating: 0, count: rowBytes)
        zero.withUnsafeBufferPointer { zeroRow in
            for row in 0..<rows {
                let line = UnsafeBufferPointer(rebasing: raster[(row * rowBytes)..<((row + 1) * rowBytes)])
                let above = row == 0 ? zeroRow : UnsafeBufferPointer(rebasing: raster[((row - 1) * rowBytes)..<(row * rowBytes)])
                var best = 0, bestCost = Int.max
                for filter in 0..<5 {
                    var cost = 0
                    candidate[filter].withUnsafeMutableBufferPointer { target in
                        for i in 0..<rowBytes {
                            let x = line[i], a = i >= bpp ? line[i - bpp] : 0, b = above[i], c = i >= bpp ? above[i - bpp] : 0
                            let value: UInt8
                            switch filter {
                            case 0: value = x
                            case 1: value = x &- a
                            case 2: value = x &- b
                            case 3: value = x &- UInt8((Int(a) + Int(b)) / 2)
                            default: value = x &- paeth(a, b, c)
                            }
                            target[i] = value
                            cost += value < 128 ? Int(value) : 256 - Int(value)
                        }
                    }
                    if cost < bestCost { (best, bestCost) = (filter, cost) }
                }
                let start = row * (rowBytes + 1)
                out[start] = UInt8(best)
                out.withUnsafeMutableBufferPointer { target in
                    candidate[best].withUnsafeBufferPointer { source in
                        for i in 0..<rowBytes { target[start + 1 + i] = source[i] }
                    }
                }
            }
        }
        return out
    }

    static func paeth(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let p = Int(a) + Int(b) - Int(c)
        let pa = abs(p - Int(a)), pb = abs(p - Int(b)), pc = abs(p - Int(c))
        if pa <= pb && pa <= pc { return a }
        return pb <= pc ? b : c
    }
}
