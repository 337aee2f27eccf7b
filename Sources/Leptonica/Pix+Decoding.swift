import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

extension Pix {
    /// Reads an image's header (format, size, depth) without decoding its pixels; `page` selects a TIFF page.
    public static func header(of bytes: [UInt8], page: Int = 0) throws(LeptonicaError) -> ImageHeader {
        LeptonicaLibrary.prepare()
        let format = ImageFormat.sniff(bytes)
        if format == .gif { return try gifHeader(of: bytes).header }
        var code: Int32 = 0, w: Int32 = 0, h: Int32 = 0, bps: Int32 = 0, spp: Int32 = 0, cmap: Int32 = 0, res: Int32 = 0
        let rc: Int32 = bytes.withUnsafeBufferPointer { buffer in
            if format.isTIFF {
                return readHeaderMemTiff(buffer.baseAddress, buffer.count, Int32(page), &w, &h, &bps, &spp, &res, &cmap, &code)
            }
            return pixReadHeaderMem(buffer.baseAddress, buffer.count, &code, &w, &h, &bps, &spp, &cmap)
        }
        guard rc == 0, w > 0, h > 0 else {
            throw LeptonicaError.captured("read header", fallback: Self.unreadableReason(bytes, format: format))
        }
        _ = LeptonicaMessages.take()
        return ImageHeader(format: ImageFormat(leptonica: code), width: Int(w), height: Int(h),
                           bitsPerSample: Int(bps), samplesPerPixel: Int(spp), hasColormap: cmap != 0)
    }

    /// A GIF's header read from its blocks (Leptonica's header of a GIF is the decoded image), with the
    /// `ImageHeader` of its first image, as Leptonica decodes it.
    private static func gifHeader(of bytes: [UInt8]) throws(LeptonicaError) -> (gif: GIFHeader, header: ImageHeader) {
        guard let gif = GIFHeader(bytes), gif.width > 0, gif.height > 0 else {
            throw LeptonicaError("read header", message: Self.unreadableReason(bytes, format: .gif))
        }
        let depth = gif.colors <= 2 ? 1 : gif.colors <= 4 ? 2 : gif.colors <= 16 ? 4 : 8
        return (gif, ImageHeader(format: .gif, width: gif.width, height: gif.height, bitsPerSample: depth,
                                 samplesPerPixel: 1, hasColormap: true))
    }

    /// The number of images in `bytes`: the pages of a TIFF, 1 for other formats.
    public static func pageCount(of bytes: [UInt8], limit: Int = 100_000) -> Int {
        LeptonicaLibrary.prepare()
        guard ImageFormat.sniff(bytes).isTIFF else { return 1 }
        var count = 0
        bytes.withUnsafeBufferPointer { buffer in
            while count < limit {
                var w: Int32 = 0, h: Int32 = 0, bps: Int32 = 0, spp: Int32 = 0, res: Int32 = 0, cmap: Int32 = 0, code: Int32 = 0
                guard readHeaderMemTiff(buffer.baseAddress, buffer.count, Int32(count), &w, &h, &bps, &spp, &res, &cmap, &code) == 0
                else { break }
                count += 1
            }
        }
        _ = LeptonicaMessages.take()
        return max(count, 1)
    }

    /// Decodes encoded image bytes (PNG, JPEG, TIFF, PNM, BMP, GIF, JPEG 2000, WebP); `page` selects a TIFF page.
    /// When `maxPixels` is given, the header is checked first and a larger image is refused before any pixel
    /// memory is allocated (decompression bombs).
    public convenience init(encoded bytes: [UInt8], page: Int = 0, maxPixels: Int? = nil) throws(LeptonicaError) {
        LeptonicaLibrary.prepare()
        guard !bytes.isEmpty else { throw LeptonicaError("decode", message: "empty input (0 bytes)") }
        let format = ImageFormat.sniff(bytes)
        if format == .unknown {
            throw LeptonicaError("decode", message: Self.unreadableReason(bytes, format: format))
        }
        if format == .pdf || format == .postscript {
            throw LeptonicaError("decode", message: "\(format) is a document, not an image; rasterize it first")
        }
        if let maxPixels {
            // A GIF's blocks are walked once: for its first image's size and for all its images together.
            let gif = format == .gif ? try Self.gifHeader(of: bytes) : nil
            let header: ImageHeader
            if let gif { header = gif.header } else { header = try Pix.header(of: bytes, page: page) }
            if header.pixelCount > maxPixels {
                throw LeptonicaError("decode", message: ImageTooLarge.message(header: header, limit: maxPixels), kind: .imageTooLarge)
            }
            if let gif = gif?.gif, gif.totalPixels > maxPixels {
                throw LeptonicaError("decode", message: ImageTooLarge.message(gifImages: gif.images,
                                                                              pixels: gif.totalPixels, limit: maxPixels),
                                     kind: .imageTooLarge)
            }
        }
        let pointer: UnsafeMutablePointer<PIX>? = bytes.withUnsafeBufferPointer { buffer in
            if format.isTIFF { return pixReadMemTiff(buffer.baseAddress, buffer.count, Int32(page)) }
            if page != 0 { return nil }
            return pixReadMem(buffer.baseAddress, buffer.count)
        }
        guard let pointer else {
            let said = LeptonicaMessages.take()
            let detail = said.isEmpty ? "" : " (\(said.joined(separator: "; ")))"
            let reason = page != 0 && !format.isTIFF ? "no page \(page + 1)" : "damaged or truncated \(format) data"
            throw LeptonicaError("decode \(format)", message: reason + detail)
        }
        _ = LeptonicaMessages.take()
        self.init(owning: pointer)
    }

    /// Reads and decodes the image file at `path` (first page).
    public convenience init(contentsOfFile path: String, maxPixels: Int? = nil) throws(LeptonicaError) {
        let bytes = try readFile(path)
        do {
            try self.init(encoded: bytes, maxPixels: maxPixels)
        } catch {
            throw LeptonicaError("\(path)", message: error.message, kind: error.kind)
        }
    }

    static func unreadableReason(_ bytes: [UInt8], format: ImageFormat) -> String {
        if bytes.isEmpty { return "empty input (0 bytes)" }
        if format != .unknown { return "damaged or truncated \(format) data" }
        let printable = bytes.prefix(512).allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (32..<127).contains($0) || $0 >= 0x80 }
        return printable ? "not an image (looks like text)" : "not an image (unknown format)"
    }
}

/// The message for an image over the pixel limit (a `LeptonicaError` of kind `imageTooLarge`).
enum ImageTooLarge {
    static let marker = "image too large"

    static func message(header: ImageHeader, limit: Int) -> String {
        let megapixels = Double(header.pixelCount) / 1_000_000
        let limitMP = Double(limit) / 1_000_000
        return "\(marker): \(header.width)x\(header.height) (\(formatted(megapixels)) MP) is over the limit of \(formatted(limitMP)) MP"
    }

    static func message(gifImages images: Int, pixels: Int, limit: Int) -> String {
        let megapixels = Double(pixels) / 1_000_000
        let limitMP = Double(limit) / 1_000_000
        return "\(marker): the GIF's \(images) images have \(formatted(megapixels)) MP in all (decoded together), over the limit of \(formatted(limitMP)) MP"
    }

    private static func formatted(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String((value * 10).rounded() / 10)
    }
}

/// Reads a whole file; errors name the file and the system's reason.
func readFile(_ path: String) throws(LeptonicaError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw LeptonicaError(path, message: String(cString: strerror(errno))) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw LeptonicaError(path, message: String(cString: strerror(errno))) }
    if (info.st_mode & S_IFMT) == S_IFDIR { throw LeptonicaError(path, message: "is a directory") }
    var bytes = [UInt8]()
    bytes.reserveCapacity(Int(info.st_size))
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw LeptonicaError(path, message: String(cString: strerror(errno)))
        }
        if count == 0 { break }
        bytes.append(contentsOf: chunk[..<count])
    }
    return bytes
}

extension Pix {
    /// The images as one multi-page TIFF (G4 for 1-bpp pages, otherwise zip-compressed).
    public static func multipageTIFF(_ pages: [Pix]) throws(LeptonicaError) -> [UInt8] {
        LeptonicaLibrary.prepare()
        guard let pixa = pixaCreate(Int32(pages.count)) else {
            throw LeptonicaError.captured("pixaCreate", fallback: "out of memory")
        }
        var reference: UnsafeMutablePointer<PIXA>? = pixa
        defer { pixaDestroy(&reference) }
        for page in pages {
            guard pixaAddPix(pixa, page.pointer, Int32(L_CLONE)) == 0 else {
                throw LeptonicaError.captured("pixaAddPix", fallback: "cannot add a page")
            }
        }
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard pixaWriteMemMultipageTiff(&data, &size, pixa) == 0, let data else {
            throw LeptonicaError.captured("pixaWriteMemMultipageTiff", fallback: "cannot write a multi-page TIFF")
        }
        defer { lept_free(data) }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }
}
