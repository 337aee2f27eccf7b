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
        guard let pointer else { throw Self.decodeFailure(bytes, page: page, format: format) }
        _ = LeptonicaMessages.take()
        self.init(owning: pointer)
    }

    /// Decodes encoded image bytes straight to 8-bit gray, so a large color page never holds more than it must:
    /// a color JPEG is decoded as its luminance only (libjpeg never makes the color pixels); any other image is
    /// decoded, converted (alpha blended onto white) and its color pixels released at once.
    /// `maxPixels` is checked against the header first, as `init(encoded:page:maxPixels:)` does.
    public static func decodedGray(_ bytes: [UInt8], page: Int = 0, maxPixels: Int? = nil) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let format = ImageFormat.sniff(bytes)
        if format == .jpeg && page == 0, let header = try? header(of: bytes), header.samplesPerPixel == 3,
           header.pixelCount <= maxPixels ?? Int.max
        {
            var warnings: Int32 = 0
            let pointer = bytes.withUnsafeBufferPointer { buffer in
                pixReadMemJpeg(buffer.baseAddress, buffer.count, 0, 1, &warnings, Int32(L_JPEG_READ_LUMINANCE))
            }
            guard let pointer else { throw decodeFailure(bytes, page: page, format: format) }
            _ = LeptonicaMessages.take()
            return Pix(owning: pointer)
        }
        let image = try Pix(encoded: bytes, page: page, maxPixels: maxPixels)
        let gray: Pix
        do {
            gray = try image.grayOnWhite()
        } catch {
            throw probedFailure(error, needing: image.width * image.height * 3)
        }
        gray.setResolution(x: image.resolution.x, y: image.resolution.y)
        pixSetInputFormat(gray.pointer, pixGetInputFormat(image.pointer))
        return gray
    }

    /// A JPEG that libjpeg reads only part of (cut short, or damaged part way): the rows decoded before the
    /// damage, the rest white, and how many rows those are (the image's height when nothing is wrong). Leptonica
    /// discards the whole image at libjpeg's first warning unless asked to continue, and then what follows the
    /// damage is libjpeg's filler (gray, or the damage decoded as noise); so the image is read twice, first to learn
    /// the row the damage begins at (Leptonica names it when it stops), then to the end with that row on painted
    /// white. `luminanceOnly`: a color JPEG read as gray (`decodedGray`). Throws when no row decodes.
    public static func decodedDamagedJPEG(_ bytes: [UInt8], luminanceOnly: Bool = false,
                                          maxPixels: Int? = nil) throws(LeptonicaError) -> (image: Pix, rowsRead: Int) {
        LeptonicaLibrary.prepare()
        guard ImageFormat.sniff(bytes) == .jpeg else {
            throw LeptonicaError("decode", message: "not a JPEG")
        }
        let header = try header(of: bytes)
        if let maxPixels, header.pixelCount > maxPixels {
            throw LeptonicaError("decode", message: ImageTooLarge.message(header: header, limit: maxPixels), kind: .imageTooLarge)
        }
        let luminance = luminanceOnly && header.samplesPerPixel == 3 ? Int32(L_JPEG_READ_LUMINANCE) : 0
        func read(_ hint: Int32) -> UnsafeMutablePointer<PIX>? {
            var warnings: Int32 = 0
            return bytes.withUnsafeBufferPointer { buffer in
                pixReadMemJpeg(buffer.baseAddress, buffer.count, 0, 1, &warnings, hint | luminance)
            }
        }
        _ = LeptonicaMessages.take()
        if let whole = read(0) {
            _ = LeptonicaMessages.take()
            return (Pix(owning: whole), Int(pixGetHeight(whole)))
        }
        let said = LeptonicaMessages.take()
        // "pixReadStreamJpeg: read error at scanline 542; nwarn = 2": rows 0..<542 came from the file's data.
        let marker = "read error at scanline "
        let rows = said.lazy.compactMap { line -> Int? in
            guard let range = line.firstRange(of: marker) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }.first
        let detail = said.isEmpty ? "" : " (\(said.joined(separator: "; ")))"
        guard let rows, rows > 0 else {
            throw LeptonicaError("decode jpeg", message: "damaged or truncated jpeg data: no row decodes" + detail)
        }
        guard let pointer = read(Int32(L_JPEG_CONTINUE_WITH_BAD_DATA)) else {
            throw LeptonicaError.captured("decode jpeg", fallback: "damaged or truncated jpeg data" + detail)
        }
        _ = LeptonicaMessages.take()
        pixSetInputFormat(pointer, Int32(IFF_JFIF_JPEG))
        let image = Pix(owning: pointer)
        if rows < image.height {
            var rest: UnsafeMutablePointer<BOX>? = boxCreate(0, Int32(rows), Int32(image.width), Int32(image.height - rows))
            defer { boxDestroy(&rest) }
            // All bits set: white at 8 and 32 bpp, the depths a JPEG decodes to.
            guard let rest, pixSetInRect(image.pointer, rest) == 0 else {
                throw LeptonicaError.captured("pixSetInRect", fallback: "cannot paint the damaged rows white")
            }
        }
        return (image, min(rows, image.height))
    }

    /// 8-bit gray, alpha blended onto white, without the full-size 32-bit copy `removingAlpha()` makes.
    private func grayOnWhite() throws(LeptonicaError) -> Pix {
        guard depth == 32 else { return try grayscale() }
        let luminance = try Pix.make("pixConvertRGBToLuminance", pixConvertRGBToLuminance(pointer))
        var opaque: Int32 = 1
        guard samplesPerPixel == 4, pixAlphaIsOpaque(pointer, &opaque) == 0, opaque == 0 else { return luminance }
        let alpha = try Pix.make("pixGetRGBComponent", pixGetRGBComponent(pointer, Int32(L_ALPHA_CHANNEL)))
        let white = try Pix(width: width, height: height, depth: 8)
        // Where alpha is 0 the page shows the white base, where it is 255 the luminance.
        return try Pix.make("pixBlendWithGrayMask", pixBlendWithGrayMask(white.pointer, luminance.pointer, alpha.pointer, 0, 0))
    }

    /// The error for a decoder that returned no image: out of memory when memory of the image's size cannot be had
    /// now (Leptonica returns NULL alike for damaged data and a failed allocation), else damaged data.
    private static func decodeFailure(_ bytes: [UInt8], page: Int, format: ImageFormat) -> LeptonicaError {
        let said = LeptonicaMessages.take()
        let detail = said.isEmpty ? "" : " (\(said.joined(separator: "; ")))"
        if page != 0 && !format.isTIFF { return LeptonicaError("decode \(format)", message: "no page \(page + 1)" + detail) }
        if let header = try? header(of: bytes, page: page) {
            let needed = header.decodeCost.peakBytes
            if !canAllocate(bytes: needed) {
                return LeptonicaError("decode \(format)", message: "out of memory: \(header.width)x\(header.height) needs about "
                                      + "\(megabytes(needed)) MB to decode and this process cannot allocate it now" + detail,
                                      kind: .outOfMemory)
            }
        }
        return LeptonicaError("decode \(format)", message: "damaged or truncated \(format) data" + detail)
    }

    /// `error` as out of memory when `bytes` cannot be allocated now, else unchanged.
    public static func probedFailure(_ error: LeptonicaError, needing bytes: Int) -> LeptonicaError {
        guard error.kind == .failed, !canAllocate(bytes: bytes) else { return error }
        return LeptonicaError(error.operation, message: "out of memory: about \(megabytes(bytes)) MB cannot be allocated now ("
                              + error.message + ")", kind: .outOfMemory)
    }

    /// Whether `bytes` of memory can be allocated now: a probe allocation, released at once and never touched
    /// (so it costs address space for a moment, no resident memory). It answers for an address-space limit
    /// (`ulimit -v`); under a cgroup limit the kernel overcommits and only the budget check protects the process.
    public static func canAllocate(bytes: Int) -> Bool {
        // Called through the symbols the dynamic linker resolved (jemalloc's, as the decoders' calls are), which also
        // keeps the optimizer from removing an allocation that is never used.
        typealias Malloc = @convention(c) (Int) -> UnsafeMutableRawPointer?
        typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
        guard bytes > 0, let mallocSymbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc"),
              let freeSymbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "free")
        else { return true }
        guard let block = unsafeBitCast(mallocSymbol, to: Malloc.self)(bytes) else { return false }
        unsafeBitCast(freeSymbol, to: Free.self)(block)
        return true
    }

    static func megabytes(_ bytes: Int) -> Int { (bytes + 999_999) / 1_000_000 }

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

/// What decoding an image costs in memory, judged from its header before any pixel is decoded (Leptonica 1.82's
/// decoders: libpng and OpenJPEG hand over the whole image before Leptonica copies it; libjpeg, TIFF strips, BMP and
/// PNM are read row by row).
public struct DecodeCost: Sendable, Equatable {
    /// Bits per pixel of the image Leptonica makes (1, 2, 4, 8, 16 or 32).
    public let bitsPerPixel: Int
    /// Bytes of that image.
    public let imageBytes: Int
    /// Bytes the decoder holds beside the image while it runs.
    public let transientBytes: Int

    /// The most memory held at once while decoding.
    public var peakBytes: Int { imageBytes + transientBytes }
}

extension ImageHeader {
    /// What decoding this image costs in memory.
    public var decodeCost: DecodeCost {
        let pixels = pixelCount
        let bits: Int
        if samplesPerPixel >= 2 {
            bits = 32
        } else if bitsPerSample == 16 {
            bits = format == .png ? 8 : 16  // Leptonica strips 16-bit PNG samples to 8 bits as it reads them
        } else {
            bits = max(1, bitsPerSample)
        }
        // Leptonica's rows are padded to 32-bit words.
        let image = (width * bits + 31) / 32 * 4 * height
        let transient: Int
        switch format {
        case .png: transient = (width * min(bitsPerSample, 8) * samplesPerPixel + 7) / 8 * height
        case .webp: transient = pixels * 4
        case .jpeg2000: transient = pixels * samplesPerPixel * 4  // OpenJPEG holds 32-bit samples
        case .gif: transient = pixels
        case .tiff: transient = samplesPerPixel > 1 ? pixels * 4 : 0  // RGBA reads take the whole raster
        default: transient = 0
        }
        return DecodeCost(bitsPerPixel: bits, imageBytes: image, transientBytes: transient)
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

extension Pix {
    /// This image as 32-bit RGBA with `alpha` (8 bpp, same size; 255 opaque) as its alpha channel: an image with
    /// transparency, as PNGs carry it, for the decoders' tests and the memory budget's.
    public func withAlpha(_ alpha: Pix) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard alpha.depth == 8, alpha.width == width, alpha.height == height else {
            throw LeptonicaError("withAlpha", message: "the alpha image must be 8 bpp and \(width)x\(height)")
        }
        // A copy, never a clone: the alpha is written into the pixels.
        let color = depth == 32 ? try copy() : try rgb()
        guard pixSetRGBComponent(color.pointer, alpha.pointer, Int32(L_ALPHA_CHANNEL)) == 0 else {
            throw LeptonicaError.captured("pixSetRGBComponent", fallback: "cannot set the alpha channel")
        }
        pixSetSpp(color.pointer, 4)
        return color
    }
}
