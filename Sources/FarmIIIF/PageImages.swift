import Crypto
import FarmCore
import FarmRuntime
import FarmStore
import Leptonica
#if canImport(Glibc)
import Glibc
#endif

/// Why a page's image cannot be shown: the page is unknown (404) or its source is not an image that still reads
/// as it was submitted (also 404 to a client, with the reason in the body).
public struct PageImageError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

/// The decoded page images, read from the files the store names (never from a path in a URL) and kept in a small
/// LRU cache, so the tiles of one page in a deep-zoom viewer decode it once.
///
/// A source is read as the coordinator reads it before a job leaves (and as `export` shows a failed page): a
/// regular file, not through a symbolic link, at most `maxSourceBytes`, with the size and SHA-256 recorded at
/// submit; decoded with Leptonica within `maxPixels`. A PDF page is rasterized with poppler's `pdftoppm` at the
/// resolution the workers read it at (300 dpi), so its image has the size its words' boxes refer to.
///
/// Thread-safety: the cache is guarded by `lock`; a cached `Pix` is only read once cached (Leptonica's crops,
/// scales and encoders read their source and make a new image; nothing clones or changes it), and each user holds
/// its own reference, so an image evicted while a request renders from it lives until that request ends.
/// `rendered` copies or crops it before anything else, since Leptonica 1.82's clones are not thread-safe.
public final class PageImages: @unchecked Sendable {
    /// Largest source file read (the coordinator's default for what a job may carry).
    public static let maxSourceBytes = 64 << 20
    /// Largest image decoded (the workers' default --max-pixels).
    public static let maxPixels = 100_000_000

    private let capacity: Int
    private let pixelBudget: Int
    private var entries: [(page: PageID, image: Pix)] = []   // most recently used last
    private var lock = pthread_mutex_t()

    /// At most `capacity` images and `pixelBudget` pixels in all (a 300 dpi A4 page is 8.7 million).
    public init(capacity: Int = 4, pixelBudget: Int = 60_000_000) {
        self.capacity = max(capacity, 1)
        self.pixelBudget = pixelBudget
        pthread_mutex_init(&lock, nil)
    }

    deinit { pthread_mutex_destroy(&lock) }

    /// How many images the cache holds now (for tests).
    public var cachedCount: Int {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return entries.count
    }

    /// The decoded image of `page`, from the cache or from its source.
    /// `readSize`: the pixel size a PDF page was read at (`Store.readSize(of:)`), which its rasterization takes.
    func image(of page: PageID, source: PageSource, readSize: (width: Int, height: Int)? = nil) throws(PageImageError) -> Pix {
        pthread_mutex_lock(&lock)
        if let index = entries.firstIndex(where: { $0.page == page }) {
            let entry = entries.remove(at: index)
            entries.append(entry)
            pthread_mutex_unlock(&lock)
            return entry.image
        }
        pthread_mutex_unlock(&lock)
        // Decoded outside the lock: two requests for one new page may both decode it, which costs time, not harm.
        let image = try Self.decoded(source, readSize: readSize)
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if !entries.contains(where: { $0.page == page }) {
            entries.append((page, image))
            var pixels = entries.reduce(0) { $0 + $1.image.width * $1.image.height }
            while entries.count > 1 && (entries.count > capacity || pixels > pixelBudget) {
                let evicted = entries.removeFirst()
                pixels -= evicted.image.width * evicted.image.height
            }
        }
        return image
    }

    /// The source's checked bytes.
    static func checkedBytes(_ source: PageSource) throws(PageImageError) -> [UInt8] {
        if source.kind == .invalid { throw PageImageError(reason: "the page's file is not an image (refused at submit)") }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.read(source.path, limit: maxSourceBytes, regularOnly: true, followLinks: false)
        } catch where error.code == ELOOP {
            // Never through a link put where the file was: it could point at any file this process may read.
            throw PageImageError(reason: "the page's file is a symbolic link now (it was a file when submitted)")
        } catch {
            throw PageImageError(reason: "the page's file cannot be read: \(error.reason)")
        }
        if let expected = source.hash {
            guard bytes.count == (source.size ?? bytes.count), SHA256.hex(bytes) == expected else {
                throw PageImageError(reason: "the page's file changed since it was submitted")
            }
        }
        return bytes
    }

    static func decoded(_ source: PageSource, readSize: (width: Int, height: Int)? = nil) throws(PageImageError) -> Pix {
        var bytes = try checkedBytes(source)
        var page = source.index
        if source.kind == .pdf {
            bytes = try rasterized(bytes, page: source.index, size: readSize)
            page = 0
        }
        do throws(LeptonicaError) {
            return try Pix(encoded: bytes, page: page, maxPixels: maxPixels)
        } catch {
            throw PageImageError(reason: "the page's image cannot be decoded: \(error.message)")
        }
    }

    /// The resolution a PDF page not read yet is shown at (the workers' for a page without a large image).
    static let pdfResolution = 300

    /// Page `page` (from 0) of the checked PDF `pdf` as PNG, by `pdftoppm`: at exactly `size` pixels when the page
    /// was read (the workers choose the resolution from the page's images, FarmPipeline's `PDFRasterizer`, whose
    /// module is not linked here: it would bring Tesseract into the server), else at `pdfResolution`.
    static func rasterized(_ pdf: [UInt8], page: Int, size: (width: Int, height: Int)? = nil) throws(PageImageError) -> [UInt8] {
        guard let tool = ["/usr/bin/pdftoppm", "/usr/local/bin/pdftoppm"].first(where: { FileSystem.exists($0) }) else {
            throw PageImageError(reason: "the page is a PDF page and pdftoppm is not installed (Debian: poppler-utils)")
        }
        let folder: String
        do throws(FileError) {
            folder = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-iiif")
        } catch {
            throw PageImageError(reason: "no temporary folder for the PDF page: \(error.reason)")
        }
        defer { FileSystem.remove(folder) }
        let status: Int32
        do throws(FileError) {
            try FileSystem.write(pdf, to: folder + "/in.pdf", mode: 0o600)
            let child = try ChildProcess(
                executable: tool,
                arguments: (size.map { ["-scale-to-x", String($0.width), "-scale-to-y", String($0.height)] }
                                ?? ["-r", String(pdfResolution)])
                    + ["-f", String(page + 1), "-l", String(page + 1), "-png", "-singlefile", folder + "/in.pdf", folder + "/page"],
                outputPath: folder + "/log.txt")
            status = child.wait()
        } catch {
            throw PageImageError(reason: "pdftoppm cannot run: \(error.reason)")
        }
        guard status == 0, let png = try? FileSystem.read(folder + "/page.png") else {
            throw PageImageError(reason: "pdftoppm cannot rasterize page \(page + 1) of the PDF (exit \(status))")
        }
        return png
    }

    /// The size of the source's image from its header, without decoding it (for a page that has no result).
    static func size(of source: PageSource) throws(PageImageError) -> (width: Int, height: Int) {
        // Rasterizing takes a second a page: a manifest of a PDF not read yet would take minutes.
        if source.kind == .pdf { throw PageImageError(reason: "a PDF page not read yet has no size without rasterizing it") }
        let bytes = try checkedBytes(source)
        do throws(LeptonicaError) {
            let header = try Pix.header(of: bytes, page: source.index)
            return (header.width, header.height)
        } catch {
            throw PageImageError(reason: "the page's image header cannot be read: \(error.message)")
        }
    }

    /// `request` cut from `image`, scaled and encoded.
    static func rendered(_ request: ImageRequest, from image: Pix) throws(LeptonicaError) -> [UInt8] {
        let region = request.region
        // First a private image: the cached one is shared by the request threads, and Leptonica 1.82's reference
        // counts are not atomic, so nothing below may clone it (grayscale() and others clone when there is nothing
        // to do). A crop is a copy; the full region is copied.
        let whole = region.x == 0 && region.y == 0 && region.width == image.width && region.height == image.height
        var shown = whole ? try image.copy()
            : try image.cropped(to: Box(x: region.x, y: region.y, width: region.width, height: region.height))
        // What the encoders take: no colormap, no alpha, 1, 8 or 32 bits (JPEG: 8 or 32).
        if shown.hasColormap { shown = try shown.removingColormap() }
        if shown.depth == 32 && shown.samplesPerPixel == 4 { shown = try shown.removingAlpha() }
        if shown.depth == 2 || shown.depth == 4 || shown.depth == 16 || (shown.depth == 1 && request.width != shown.width) {
            // 1 bpp is scaled as gray, so a reduced page stays readable instead of losing its thin strokes.
            shown = try shown.grayscale()
        }
        if request.width != shown.width || request.height != shown.height {
            shown = try shown.scaled(toWidth: request.width, height: request.height)
        }
        switch request.quality {
        case .default, .color: break
        case .gray: if shown.depth != 8 || shown.hasColormap { shown = try shown.grayscale() }
        case .bitonal: if shown.depth != 1 { shown = try shown.binarized() }
        }
        if request.format == .jpg && shown.depth == 1 { shown = try shown.grayscale() }
        return try shown.encoded(as: request.format == .jpg ? .jpeg : .png, quality: 85)
    }
}
