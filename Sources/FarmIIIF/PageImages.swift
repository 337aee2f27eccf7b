import Crypto
import FarmCore
import FarmRuntime
import FarmStore
import Leptonica
import QPDF
#if canImport(Glibc)
import Glibc
#endif

/// Why a page's image cannot be shown: the page is unknown (404) or its source is not an image that still reads
/// as it was submitted (also 404 to a client, with the reason in the body), or making it passed a render limit
/// (`status` 500: the same request would pass it again).
public struct PageImageError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var status = 404
    /// The page API's status where it says more than IIIF's: 409 for a file that changed or became a link, 410 for
    /// one that cannot be read now (moved away, a FIFO); else `status`.
    public var pageStatus: Int?
    public var description: String { reason }

    public init(reason: String, status: Int = 404, pageStatus: Int? = nil) {
        self.reason = reason
        self.status = status
        self.pageStatus = pageStatus
    }
}

/// A page's image as a browser shows it: PNG or JPEG bytes and their media type.
public struct BrowserImage: Sendable {
    public let bytes: [UInt8]
    public let mediaType: String
    /// Its pixel size.
    public let width: Int
    public let height: Int
}

/// What one image made from a source may take. A PDF page's pixel size is computed from its box before anything
/// renders and a page past `maxPixels` is made smaller, to fit, keeping its shape (a 4000 × 4000 pt page at 300 dpi
/// would be 278 million pixels, 1.1 GB); pdftoppm is given that exact size, runs at a lower priority than the
/// server, within `childMemoryBytes` of address space (`PopplerRasterizer.Limits`), and is killed past `seconds`.
public struct RenderLimits: Sendable {
    /// Pixels of a rendered PDF page: 25 million is a 300 dpi A3 page with room, 100 MB decoded.
    public var maxPixels = 25_000_000
    /// Wall time of one pdftoppm run.
    public var seconds = 20.0
    /// pdftoppm's address space (RLIMIT_AS): its bitmap at `maxPixels` and poppler, with room.
    public var childMemoryBytes = 1 << 30

    public init() {}
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
    public let limits: RenderLimits
    /// Decoded images by page and the file they came from (`fileKey`), most recently used last.
    private var entries: [(page: PageID, file: String, image: Pix)] = []
    /// Browser images made from decoded ones (`browserImage`), most recently used last; at most `capacity` × 2
    /// and `browserBudget` bytes.
    private var browserEntries: [(key: String, image: BrowserImage)] = []
    private let browserBudget = 64 << 20
    /// Pages being decoded now: a second request for one waits for the first instead of rendering it again.
    private var making: Set<PageID> = []
    private var lock = pthread_mutex_t()
    private var made = pthread_cond_t()
    private var recorder: HashRecorder?

    /// Where the hash of an old store's page file goes at its first read (set by the service that owns the store).
    public var recordHash: HashRecorder? {
        get {
            pthread_mutex_lock(&lock)
            defer { pthread_mutex_unlock(&lock) }
            return recorder
        }
        set {
            pthread_mutex_lock(&lock)
            defer { pthread_mutex_unlock(&lock) }
            recorder = newValue
        }
    }

    /// At most `capacity` images and `pixelBudget` pixels in all (a 300 dpi A4 page is 8.7 million).
    public init(capacity: Int = 4, pixelBudget: Int = 60_000_000, limits: RenderLimits = RenderLimits()) {
        self.capacity = max(capacity, 1)
        self.pixelBudget = pixelBudget
        self.limits = limits
        pthread_mutex_init(&lock, nil)
        pthread_cond_init(&made, nil)
    }

    deinit {
        pthread_cond_destroy(&made)
        pthread_mutex_destroy(&lock)
    }

    /// How many images the cache holds now (for tests).
    public var cachedCount: Int {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return entries.count
    }

    /// The decoded image of `page`, from the cache or from its source.
    /// `readSize`: the pixel size a PDF page was read at (`Store.readSize(of:)`), which its rasterization takes.
    func image(of page: PageID, source: SourceRef, readSize: (width: Int, height: Int)? = nil) throws(PageImageError) -> Pix {
        // A cached image counts only while the file is the one it was made from (its place, size and time): a file
        // moved, replaced or changed since is read, and checked, again.
        let file = Self.fileKey(source)
        pthread_mutex_lock(&lock)
        while true {
            if let index = entries.firstIndex(where: { $0.page == page }) {
                let entry = entries.remove(at: index)
                if file != nil && entry.file == file {
                    entries.append(entry)
                    pthread_mutex_unlock(&lock)
                    return entry.image
                }
            }
            guard making.contains(page) else { break }
            pthread_cond_wait(&made, &lock)
        }
        making.insert(page)
        pthread_mutex_unlock(&lock)
        // Decoded outside the lock; requests for this page wait for it (a failure lets the next one try).
        let decoded = Result(catching: { () throws(PageImageError) -> Pix in try Self.decoded(source, readSize: readSize, limits: limits, record: recordHash) })
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        making.remove(page)
        pthread_cond_broadcast(&made)
        let image = try decoded.get()
        if let file, !entries.contains(where: { $0.page == page }) {
            entries.append((page, file, image))
            var pixels = entries.reduce(0) { $0 + $1.image.width * $1.image.height }
            while entries.count > 1 && (entries.count > capacity || pixels > pixelBudget) {
                let evicted = entries.removeFirst()
                pixels -= evicted.image.width * evicted.image.height
            }
        }
        return image
    }

    /// What a cached image of `source` is keyed by besides its page: the file's path, device, inode, size and
    /// modification time (lstat, not through a link), and the hash recorded at submit; nil when it cannot be
    /// looked at (then nothing is cached, and reading it says why).
    static func fileKey(_ source: SourceRef) -> String? {
        var info = stat()
        guard source.path.withCString({ lstat($0, &info) }) == 0 else { return nil }
        return "\(source.path.description)\u{0}\(info.st_dev):\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
            + ":\(source.hash ?? "-")"
    }

    /// The whole page as a browser shows it (the page API's `/api/pages/{id}/image`, which the viewer draws the
    /// word boxes on): a PNG or JPEG source within `limits.maxPixels` as it is (checked as every source is);
    /// anything else (a PDF page, a TIFF frame, JPEG 2000, WebP, PNM, BMP, GIF, a PNG or JPEG past the limit)
    /// decoded by `image(of:)` (the cache and limits IIIF uses), made smaller to fit `limits.maxPixels` keeping its
    /// shape, and encoded: PNG for a bilevel or palette image, else JPEG. Kept in a small cache of its own, keyed by
    /// the page, its file (`fileKey`) and the size it was read at. The word boxes' space is the image's whole extent
    /// (the viewer scales them to it), so a smaller image keeps them in place.
    public func browserImage(of page: PageID, source: SourceRef,
                             readSize: (width: Int, height: Int)? = nil) throws(PageImageError) -> BrowserImage {
        let file = Self.fileKey(source)
        let key = "\(page.rawValue) \(file ?? "-") \(readSize.map { "\($0.width)x\($0.height)" } ?? "-")"
        pthread_mutex_lock(&lock)
        if file != nil, let index = browserEntries.firstIndex(where: { $0.key == key }) {
            let entry = browserEntries.remove(at: index)
            browserEntries.append(entry)
            pthread_mutex_unlock(&lock)
            return entry.image
        }
        pthread_mutex_unlock(&lock)
        if source.kind == .image {
            let bytes = try Self.checkedBytes(source, record: recordHash)
            let format = ImageFormat.sniff(bytes)
            if format == .png || format == .jpeg, let header = try? Pix.header(of: bytes),
               header.width * header.height <= limits.maxPixels {
                // Already a browser image within the limit: the file itself, as submitted (not cached: it is
                // read and checked each time, as IIIF reads it). A browser shows a JPEG turned by its EXIF
                // orientation (CSS image-orientation: from-image), so its size is the turned one.
                let turned = format == .jpeg && Self.exifTurns(bytes)
                return BrowserImage(bytes: bytes, mediaType: format == .png ? "image/png" : "image/jpeg",
                                    width: turned ? header.height : header.width,
                                    height: turned ? header.width : header.height)
            }
        }
        let decoded = try image(of: page, source: source, readSize: readSize)
        let fit = min(1, (Double(max(limits.maxPixels, 1)) / Double(decoded.width * decoded.height)).squareRoot())
        let (width, height) = (max(1, Int(Double(decoded.width) * fit)), max(1, Int(Double(decoded.height) * fit)))
        let png = decoded.depth < 8 || decoded.hasColormap
        let made: BrowserImage
        do {
            let request = try ImageRequest(region: "full", size: "\(width),\(height)", rotation: "0",
                                           qualityAndFormat: png ? "default.png" : "default.jpg",
                                           imageWidth: decoded.width, imageHeight: decoded.height)
            made = BrowserImage(bytes: try Self.rendered(request, from: decoded), mediaType: request.format.mediaType,
                                width: width, height: height)
        } catch let error as ImageRequest.Invalid {
            throw PageImageError(reason: "the page's image cannot be sized for a browser: \(error.reason)", status: 500)
        } catch let error as LeptonicaError {
            throw PageImageError(reason: "the page's image cannot be encoded for a browser: \(error.message)", status: 500)
        } catch {
            throw PageImageError(reason: "the page's image cannot be made: \(error)", status: 500)
        }
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        // Entries of this page made from another file (moved, changed) go.
        browserEntries.removeAll { $0.key.hasPrefix("\(page.rawValue) ") && $0.key != key }
        if file != nil && !browserEntries.contains(where: { $0.key == key }) {
            browserEntries.append((key, made))
            var bytes = browserEntries.reduce(0) { $0 + $1.image.bytes.count }
            while browserEntries.count > 1 && (browserEntries.count > capacity * 2 || bytes > browserBudget) {
                bytes -= browserEntries.removeFirst().image.bytes.count
            }
        }
        return made
    }

    /// How many browser images the cache holds now (for tests).
    public var cachedBrowserCount: Int {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return browserEntries.count
    }

    /// The source's checked bytes, read by the one reader of a page's file (`SourceRef.read`); bytes of an old
    /// store's page, which has no hash to check them against, are given to `record` for the store to keep their hash.
    static func checkedBytes(_ source: SourceRef, record: HashRecorder? = nil) throws(PageImageError) -> [UInt8] {
        if source.kind == .invalid { throw PageImageError(reason: "the page's file is not an image (refused at submit)") }
        do throws(SourceError) {
            let read = try source.read(limit: maxSourceBytes)
            if read.unchecked { record?(source, read) }
            return read.bytes
        } catch {
            // The page API says 409 for a file that is no longer the one submitted, 410 for one that cannot be read.
            let conflict = error.problem == .link || error.problem == .changed
            let reason = switch error.problem {
            case .link: "the page's file is a symbolic link now (it was not when submitted)"
            case .changed: "the page's file changed since it was submitted"
            default: "the page's file cannot be read: " + error.message
            }
            throw PageImageError(reason: reason, pageStatus: conflict ? 409 : 410)
        }
    }

    /// Keeps the hash of an old store's page file at its first read (`Store.recordSourceHash`).
    public typealias HashRecorder = @Sendable (SourceRef, SourceBytes) -> Void

    static func decoded(_ source: SourceRef, readSize: (width: Int, height: Int)? = nil,
                        limits: RenderLimits = RenderLimits(), record: HashRecorder? = nil) throws(PageImageError) -> Pix {
        var bytes = try checkedBytes(source, record: record)
        var page = source.index
        var most = maxPixels
        if source.kind == .pdf {
            let name = "page \(source.index + 1) of \(source.path)"
            let size = try renderSize(bytes, name: name, page: source.index, readSize: readSize, maxPixels: limits.maxPixels)
            bytes = try rasterized(bytes, name: name, page: source.index, size: size, limits: limits)
            page = 0
            // pdftoppm rounds the size it was given up by a pixel at most.
            most = (size.width + 1) * (size.height + 1)
        }
        do throws(LeptonicaError) {
            let image = try Pix(encoded: bytes, page: page, maxPixels: most)
            // A JPEG as people see it, as the workers decode it (its words' boxes are on the turned picture).
            guard source.kind == .image, ImageFormat.sniff(bytes) == .jpeg,
                  let orientation = EXIF.orientation(of: bytes), orientation != 1 else { return image }
            let shown = try image.oriented(exif: orientation)
            shown.setResolution(x: image.resolution.x, y: image.resolution.y)
            return shown
        } catch {
            throw PageImageError(reason: "the page's image cannot be decoded: \(error.message)")
        }
    }

    /// Whether a JPEG's EXIF orientation swaps its width and height (5-8: a quarter turn).
    static func exifTurns(_ jpeg: [UInt8]) -> Bool {
        (5...8).contains(EXIF.orientation(of: jpeg) ?? 1)
    }

    /// The resolution a PDF page not read yet is shown at (the workers' for a page without a large image).
    static let pdfResolution = 300

    /// The pixel size page `page` (from 0) of `pdf` is shown at, before anything renders: the size it was read at
    /// (`readSize`), else its visible box at `pdfResolution`, turned by its /Rotate as pdftoppm turns it; either
    /// made smaller to fit `maxPixels`, keeping its shape. `turned`: the page has /Rotate 90 or 270 (pdftoppm's
    /// -scale-to-x and -y then size the page before it is turned).
    static func renderSize(_ pdf: [UInt8], name: String, page: Int, readSize: (width: Int, height: Int)?,
                           maxPixels: Int) throws(PageImageError) -> (width: Int, height: Int, turned: Bool) {
        let facts: PDFPageFacts
        do throws(QPDFError) {
            facts = try QPDF.pageFacts(pdf, name: name, page: page)
        } catch {
            throw PageImageError(reason: "\(name) cannot be read as a PDF page: \(error.message)")
        }
        let turned = facts.rotation == 90 || facts.rotation == 270
        var width: Double, height: Double
        if let readSize, readSize.width > 0, readSize.height > 0 {
            (width, height) = (Double(readSize.width), Double(readSize.height))
        } else {
            let scale = Double(pdfResolution) / 72
            (width, height) = turned ? (facts.height * scale, facts.width * scale) : (facts.width * scale, facts.height * scale)
        }
        guard width.isFinite, height.isFinite, width >= 0.5, height >= 0.5 else {
            throw PageImageError(reason: "\(name) has an empty or unreadable page box (\(width) × \(height) pixels)")
        }
        let fit = min(1, (Double(max(maxPixels, 1)) / (width * height)).squareRoot())
        return (max(1, Int(width * fit)), max(1, Int(height * fit)), turned)
    }

    /// Page `page` (from 0) of the checked PDF `pdf` as PNG, at exactly `size` pixels (`renderSize`: the workers
    /// choose the resolution from the page's images, FarmPipeline's `PDFRasterizer`, whose module is not linked here:
    /// it would bring Tesseract into the server), within `limits`, by the one rasterizer of PDF pages
    /// (`PopplerRasterizer`) at a lower priority than the server's own threads.
    static func rasterized(_ pdf: [UInt8], name: String, page: Int, size: (width: Int, height: Int, turned: Bool),
                           limits: RenderLimits) throws(PageImageError) -> [UInt8] {
        let folder: String
        do throws(FileError) {
            folder = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-iiif")
        } catch {
            throw PageImageError(reason: "no temporary folder for \(name): \(error.reason)")
        }
        defer { FileSystem.remove(folder) }
        do throws(FileError) {
            try FileSystem.write(pdf, to: folder + "/in.pdf", mode: 0o600)
        } catch {
            throw PageImageError(reason: "pdftoppm cannot run for \(name): \(error.reason)")
        }
        // pdftoppm sizes a page turned a quarter by its /Rotate before it turns it.
        let (x, y) = size.turned ? (size.height, size.width) : (size.width, size.height)
        do throws(PopplerRasterizer.Failure) {
            return try PopplerRasterizer.rasterize(folder + "/in.pdf", page: page, size: .pixels(width: x, height: y),
                                                   limits: PopplerRasterizer.Limits(seconds: limits.seconds,
                                                                                    addressSpaceBytes: limits.childMemoryBytes,
                                                                                    niceness: 10))
        } catch {
            switch error {
            case .notInstalled:
                throw PageImageError(reason: "\(name) is a PDF page and pdftoppm is not installed (Debian: poppler-utils)")
            case .cannotRun(let reason):
                throw PageImageError(reason: "pdftoppm cannot run for \(name): \(reason.reason)")
            case .timedOut:
                throw PageImageError(reason: "\(name): pdftoppm took longer than \(Self.seconds(limits.seconds)) to render it at "
                                     + "\(size.width) × \(size.height) pixels; stopped", status: 500)
            case .failed(let status, let said):
                throw PageImageError(reason: "pdftoppm cannot render \(name) at \(size.width) × \(size.height) pixels "
                                     + "(exit \(status))\(said.map { ": \($0)" } ?? "")")
            }
        }
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// The size of the source's image from its header, without decoding it (for a page that has no result).
    static func size(of source: SourceRef, record: HashRecorder? = nil) throws(PageImageError) -> (width: Int, height: Int) {
        // Rasterizing takes a second a page: a manifest of a PDF not read yet would take minutes.
        if source.kind == .pdf { throw PageImageError(reason: "a PDF page not read yet has no size without rasterizing it") }
        let bytes = try checkedBytes(source, record: record)
        do throws(LeptonicaError) {
            let header = try Pix.header(of: bytes, page: source.index)
            // A JPEG's canvas is the picture as shown, turned by its EXIF orientation (as the workers decode it).
            if header.format == .jpeg && exifTurns(bytes) { return (header.height, header.width) }
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
