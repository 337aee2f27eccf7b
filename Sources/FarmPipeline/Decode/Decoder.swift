import FarmCore
import FarmRuntime
import Leptonica

/// Limits that protect a worker from hostile or absurd input.
public struct DecodeLimits: Sendable, Equatable {
    /// Largest image accepted, in pixels (default 100 megapixels).
    public var maxPixels: Int
    /// Memory one page may take from decoding through the stages, in bytes (see `PageMemoryEstimate`).
    public var pageMemory: Int
    /// The default page budget, 384 MiB: the Kubernetes worker pod (Deploy/kubernetes/worker.yaml) has 4 slots of
    /// about 90 MB each within a 768 MiB limit, which leaves room for one page of this size at a time.
    public static let defaultPageMemory = 384 << 20
    /// Whether `fitted(to:cgroupShares:)` may lower `pageMemory` to the room the process's memory limits leave
    /// (false when the budget was given explicitly).
    public var budgetFromLimits = false
    /// Where a budget lowered by `fitted` came from ("RLIMIT_AS 300 MB (131 MB in use)"), for messages.
    public var budgetSource: String?
    /// Kept aside from the room under the memory limits for what a page's estimate leaves out: an engine made on
    /// first use (the OSD engine and its data, about 40 MB), the allocator's slack and the page's own small buffers.
    public static let memoryReserve = 64 << 20

    public init(maxPixels: Int = 100_000_000, pageMemory: Int = DecodeLimits.defaultPageMemory) {
        self.maxPixels = maxPixels
        self.pageMemory = pageMemory
    }

    /// These limits with the page budget no larger than the room `memory` leaves one page, less `memoryReserve`
    /// (at least 16 MiB): the address space is the reading process's own, a cgroup's room is shared by
    /// `cgroupShares` pages read at once. Unchanged when `budgetFromLimits` is false or there is no limit.
    public func fitted(to memory: MemoryLimits, cgroupShares: Int) -> DecodeLimits {
        guard budgetFromLimits, let room = memory.room(cgroupShares: cgroupShares) else { return self }
        var fitted = self
        let budget = max(16 << 20, room - Self.memoryReserve)
        if budget < pageMemory {
            fitted.pageMemory = budget
            fitted.budgetSource = memory.description
        }
        return fitted
    }
}

/// The memory one page takes from decoding through recognition, judged from its header before any pixel is
/// decoded: the larger of the decoding phase (the decoder's own buffers, the decoded image, its normalized copy)
/// and the stages' phase, `3 × w + 2` bytes per pixel for a working image of `w` bytes per pixel (a stage's input and
/// output, deskew's rotation buffer, the gray copy kept for the second reading, Tesseract's own copies).
/// Measured (debug build, peak RSS above a small page's): a 35 MP RGB receipt JPEG 453 MB (estimated 487 MB);
/// 81 MP read as gray without dewarp 370 MB (estimated 405 MB); a 28 MP RGB PNG 202 MB (estimated 195 MB at decoding).
public struct PageMemoryEstimate: Sendable, Equatable {
    public let header: ImageHeader
    /// Bytes when the page is decoded as the file has it (color kept where the file has it).
    public let asDecoded: Int
    /// Bytes when the page is decoded straight to 8-bit gray (`Pix.decodedGray`).
    public let asGray: Int

    /// Bytes per pixel of the stages' phase for a working image of `working` bytes per pixel.
    static func stageBytesPerPixel(working: Int) -> Int { 3 * working + 2 }

    public init(header: ImageHeader) {
        self.header = header
        let pixels = header.pixelCount
        let gray = (header.width + 3) / 4 * 4 * header.height
        let cost = header.decodeCost
        let normalizes = header.samplesPerPixel == 4 || header.hasColormap || [2, 4, 16].contains(cost.bitsPerPixel)
        // A colormap may expand to 32 bpp; alpha is blended into a 32-bit copy; 2, 4 and 16 bpp become 8.
        let working = header.hasColormap || cost.bitsPerPixel == 32 ? 4 : 1
        let normalized = normalizes ? pixels * working : cost.imageBytes
        asDecoded = max(cost.peakBytes, normalizes ? cost.imageBytes + normalized : 0,
                        pixels * Self.stageBytesPerPixel(working: working))
        let lumaOnly = header.format == .jpeg && header.samplesPerPixel == 3
        let conversion = cost.bitsPerPixel == 32 && header.samplesPerPixel == 4 ? 4 * gray : gray
        let stages = pixels * Self.stageBytesPerPixel(working: 1)
        asGray = lumaOnly ? stages : max(cost.peakBytes, cost.imageBytes + conversion, stages)
    }

    static func megabytes(_ bytes: Int) -> Int { (bytes + 999_999) / 1_000_000 }
}

/// A decoded page image and what decoding learned about it.
public struct DecodedPage {
    public let image: Pix
    public let format: ImageFormat
    /// The resolution the file declared (0 when it did not say or said something incredible).
    public var declaredResolution: Int
    /// The EXIF orientation applied to a JPEG (1: none), so `image` is the picture as people see it.
    public let exifOrientation: Int
    /// The page as decoded, before the correction stages, for the second reading of a weak page.
    public var uncorrected: UncorrectedImage?
    /// The page before the correction stages the engine may read without (`PageRecognizer.stagesMaybeLeftOut`): the
    /// same page as `image` but for scaling (those stages change no geometry but size), kept only when asked for.
    public var lessCorrected: Pix?
    /// The body text's size in the pixels of `lessCorrected` when it is kept, else of `image`: as the scale stage
    /// measured it (on the page lighting correction made of `lessCorrected`, the same geometry), or as the recognizer
    /// measured it first; nil when not measured yet (measuring costs about what a stage does: measure it once).
    public var measuredTextSize: TextSize.Estimate?
    /// The memory the page may take at the stages (bytes; nil: no budget), so no stage makes it larger than that.
    public var memoryBudget: Int?
    /// For a JPEG cut short or damaged part way, how many of the file's rows were decoded (the rest of the page is
    /// white); nil when the whole image decoded.
    public var rowsRead: Int?
    /// The file's rows (before its EXIF orientation is applied), for the `truncated` finding.
    var fileRows = 0
    /// For a PDF page, the errors its rasterizer reported while drawing it (a damaged page is drawn as far as it
    /// goes, and may lack what they concerned: its text, its image): the `pdf_errors` finding.
    public var drawingErrors: [String] = []

    public init(image: Pix, format: ImageFormat, declaredResolution: Int, exifOrientation: Int = 1) {
        self.image = image
        self.format = format
        self.declaredResolution = declaredResolution
        self.exifOrientation = exifOrientation
    }

    /// What decoding found, for the page's JSON.
    public var findings: JSON {
        var fields: [(String, JSON)] = [
            ("format", JSON(format.description)), ("width", JSON(image.width)), ("height", JSON(image.height)),
            ("depth", JSON(image.depth)), ("resolution", JSON(declaredResolution)), ("exif_orientation", JSON(exifOrientation)),
        ]
        if let rowsRead {
            fields.append(("truncated", .object([("rows_read", JSON(rowsRead)), ("rows", JSON(fileRows)),
                                                  ("rest", JSON("white"))])))
        }
        if !drawingErrors.isEmpty {
            fields.append(("pdf_errors", .object([("count", JSON(drawingErrors.count)),
                                                   ("first", .array(drawingErrors.prefix(3).map { JSON(String($0.prefix(200))) }))])))
        }
        return .object(fields)
    }
}

/// The decode stage: encoded bytes in, an image Tesseract can take out (no colormap, no alpha, 1, 8 or 32 bpp).
public enum Decoder {
    public static let stage = "decode"

    /// Decodes a page within `limits`. A page over the memory budget as the file has it is decoded straight to gray
    /// when the color need not be kept (`keepColor` false: the page's image mode is gray or bw), else refused as
    /// `image-too-large` with the numbers; an allocation that fails is `out-of-memory` (retryable), never damaged data.
    public static func decode(_ bytes: [UInt8], page: Int = 0, limits: DecodeLimits = DecodeLimits(), keepColor: Bool = true)
        throws(PageFailure) -> DecodedPage
    {
        let (image, rowsRead) = try decodedImage(bytes, page: page, limits: limits, keepColor: keepColor)
        let format = image.inputFormat
        do {
            var normalized = image
            if normalized.hasColormap { normalized = try normalized.removingColormap() }
            if normalized.depth == 32 && normalized.samplesPerPixel == 4 { normalized = try normalized.removingAlpha() }
            if normalized.depth == 16 || normalized.depth == 2 || normalized.depth == 4 { normalized = try normalized.grayscale() }
            let declared = image.resolution.y
            let credible = (70...2400).contains(declared) ? declared : 0
            let orientation = format == .jpeg ? EXIF.orientation(of: bytes) ?? 1 : 1
            normalized = try applying(orientation: orientation, to: normalized)
            if normalized !== image { normalized.setResolution(x: image.resolution.x, y: image.resolution.y) }
            var decoded = DecodedPage(image: normalized, format: format, declaredResolution: credible, exifOrientation: orientation)
            decoded.memoryBudget = limits.pageMemory
            if let rowsRead, rowsRead < image.height {
                decoded.rowsRead = rowsRead
                decoded.fileRows = image.height
            }
            return decoded
        } catch {
            // Each step makes one copy at most of the image's size.
            throw failure(Pix.probedFailure(error, needing: image.width * image.height * 4))
        }
    }

    /// The file's image as Leptonica decodes it, within `limits` (see `decode`), and for a JPEG that decodes only
    /// in part (cut short, damaged part way) how many rows did: those rows, the rest white, rather than no page.
    /// A JPEG of which no row decodes fails as damaged data.
    private static func decodedImage(_ bytes: [UInt8], page: Int, limits: DecodeLimits, keepColor: Bool)
        throws(PageFailure) -> (image: Pix, rowsRead: Int?)
    {
        var estimate: PageMemoryEstimate?
        var gray = false
        do {
            // An unreadable header is left to the decoder, whose error says why.
            if let header = try? Pix.header(of: bytes, page: page), header.pixelCount <= limits.maxPixels {
                estimate = PageMemoryEstimate(header: header)
            }
            if let estimate, estimate.asDecoded > limits.pageMemory {
                guard !keepColor, estimate.asGray <= limits.pageMemory else {
                    throw PageFailure(stage: stage, code: .imageTooLarge, message: overBudget(estimate, keepColor: keepColor,
                                                                                              budget: limits.pageMemory)
                                          + (limits.budgetSource.map { " (set by the memory limits: \($0))" } ?? ""))
                }
                gray = true
                return (try Pix.decodedGray(bytes, page: page, maxPixels: limits.maxPixels), nil)
            }
            return (try Pix(encoded: bytes, page: page, maxPixels: limits.maxPixels), nil)
        } catch let failure as PageFailure {
            throw failure
        } catch let error as LeptonicaError {
            guard error.kind == .failed, page == 0, ImageFormat.sniff(bytes) == .jpeg else { throw failure(error) }
            do throws(LeptonicaError) {
                let partial = try Pix.decodedDamagedJPEG(bytes, luminanceOnly: gray, maxPixels: limits.maxPixels)
                return (partial.image, partial.rowsRead)
            } catch {
                throw failure(error)
            }
        } catch {
            throw PageFailure(stage: stage, code: .internalError, message: "\(error)")
        }
    }

    private static func failure(_ error: LeptonicaError) -> PageFailure {
        switch error.kind {
        case .imageTooLarge: PageFailure(stage: stage, code: .imageTooLarge, message: error.message)
        case .outOfMemory: PageFailure(stage: stage, code: .outOfMemory, message: error.message, retryable: true)
        case .failed: PageFailure(stage: stage, code: .decodeFailed, message: error.message)
        }
    }

    /// "image too large for the page memory budget: 9000x9000 png, 4 samples of 8 bits (81.0 MP) needs about 648 MB
    /// (648 MB read as gray), over the budget of 403 MB".
    static func overBudget(_ estimate: PageMemoryEstimate, keepColor: Bool, budget: Int) -> String {
        let header = estimate.header
        let megapixels = (Double(header.pixelCount) / 100_000).rounded() / 10
        let gray = keepColor ? " (its color is kept)"
            : " (\(PageMemoryEstimate.megabytes(estimate.asGray)) MB read as gray)"
        return "image too large for the page memory budget: \(header.width)x\(header.height) \(header.format), "
            + "\(header.samplesPerPixel) sample\(header.samplesPerPixel == 1 ? "" : "s") of \(header.bitsPerSample) bits "
            + "(\(megapixels) MP) needs about "
            + "\(PageMemoryEstimate.megabytes(estimate.asDecoded)) MB\(gray), over the budget of "
            + "\(PageMemoryEstimate.megabytes(budget)) MB"
    }

    /// Turns and mirrors an image the way its EXIF orientation says it should be shown.
    static func applying(orientation: Int, to image: Pix) throws(LeptonicaError) -> Pix {
        try image.oriented(exif: orientation)
    }
}
