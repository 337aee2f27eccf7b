import FarmCore
import Leptonica
import Tesseract

/// How the seeing stages run. A disabled stage is left out of the pipeline, not skipped inside it.
public struct PipelineOptions: Sendable, Hashable {
    public var segment: Bool
    public var orient: Bool
    public var deskew: Bool
    /// Straighten curved text lines (a book page that does not lie flat).
    public var dewarp: Bool
    public var scale: Bool
    public var enhance: Bool
    /// The look of the page image kept for the PDF (the OCR sees whatever reads best).
    public var mode: ImageMode
    /// OSD confidence below which the page is left as it is.
    public var orientationThreshold: Double

    public init(segment: Bool = true, orient: Bool = true, deskew: Bool = true, dewarp: Bool = true, scale: Bool = true,
                enhance: Bool = true, mode: ImageMode = .gray, orientationThreshold: Double = OrientStage.defaultThreshold)
    {
        self.segment = segment
        self.orient = orient
        self.deskew = deskew
        self.dewarp = dewarp
        self.scale = scale
        self.enhance = enhance
        self.mode = mode
        self.orientationThreshold = orientationThreshold
    }

    /// Decode and recognize only: the page as the file has it.
    public static let none = PipelineOptions(segment: false, orient: false, deskew: false, dewarp: false, scale: false,
                                              enhance: false)

    /// These options without `stages`.
    public func leavingOut(_ stages: Set<CorrectionStage>) -> PipelineOptions {
        var options = self
        for stage in stages {
            switch stage {
            case .segment: options.segment = false
            case .orient: options.orient = false
            case .deskew: options.deskew = false
            case .dewarp: options.dewarp = false
            case .scale: options.scale = false
            case .enhance: options.enhance = false
            }
        }
        return options
    }

    /// The stages and look a page's options ask for.
    public init(_ options: PageOptions) {
        let skipped = Set(options.skippedStages)
        self.init(segment: !skipped.contains(.segment), orient: !skipped.contains(.orient),
                  deskew: !skipped.contains(.deskew), dewarp: !skipped.contains(.dewarp), scale: !skipped.contains(.scale),
                  enhance: !skipped.contains(.enhance),
                  mode: options.imageMode)
    }
}

/// What the stages learned about one page and did to it. Every geometric change is kept in `toPage`, so a
/// point on the corrected page maps back to the original image (`toOriginal`) and the other way.
public struct PageContext {
    public let originalWidth: Int
    public let originalHeight: Int
    /// Pixels per inch of the current image (declared, estimated, or set by rectification).
    public var resolution: Int
    /// Original image → current image.
    public var toPage: Homography = .identity
    /// Each stage's findings, in order.
    public var findings: [(String, JSON)] = []
    public var timings: [StageTiming] = []
    /// The document found in the photo (set by segment).
    public var document: DocumentDetection?
    /// The page image in the user's chosen look, when it differs from what OCR reads (set by enhance).
    public var keptImage: Pix?
    /// The languages the page will be read in (stages that depend on the script look here).
    public var languages: [String] = ["eng"]
    /// The memory the page may take (bytes; nil: no budget), from `DecodeLimits.pageMemory`.
    public var memoryBudget: Int?
    /// The page as it was before the first stage of those `PagePipeline.run` was asked to keep the page before.
    public var lessCorrected: Pix?
    /// The body text's size as the scale stage measured it, in the pixels of the page before scaling (the stages from
    /// `lessCorrected` to scaling change no geometry).
    public var unscaledTextSize: TextSize.Estimate?

    public init(originalWidth: Int, originalHeight: Int, resolution: Int) {
        self.originalWidth = originalWidth
        self.originalHeight = originalHeight
        self.resolution = resolution
    }

    /// Current image → original image.
    public var toOriginal: Homography { toPage.inverse ?? .identity }

    /// The largest factor `image` may be enlarged by within the page's memory budget: the enlarged copy and what
    /// the later stages and recognition make of it (`PageMemoryEstimate`'s bytes per pixel), beside the source
    /// (nil: no budget).
    func largestEnlargement(of image: Pix) -> Double? {
        guard let memoryBudget else { return nil }
        let working = max(1, image.depth / 8)
        let pixels = Double(image.width * image.height)
        let room = Double(memoryBudget) - pixels * Double(working)
        let perPixel = Double(PageMemoryEstimate.stageBytesPerPixel(working: working))
        return max(1, (room / (pixels * perPixel)).squareRoot())
    }

    /// Whether a step costing `bytesPerPixel` of `image`'s pixels fits the page's memory budget (true: no budget).
    func fits(_ image: Pix, bytesPerPixel: Int) -> Bool {
        guard let memoryBudget else { return true }
        return image.width * image.height * bytesPerPixel <= memoryBudget
    }

    mutating func record(_ stage: String, _ findings: JSON) { self.findings.append((stage, findings)) }

    /// All findings as one JSON object, stage by stage.
    public var findingsJSON: JSON { .object(findings) }
}

/// One step of the page pipeline: an image and the page's context in, an image out.
public protocol PageStage {
    var name: String { get }
    func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix
}

/// The seeing stages composed in order for one page slot (stages hold engines, so one pipeline per slot).
public final class PagePipeline {
    public let stages: [any PageStage]
    public let options: PipelineOptions

    public init(options: PipelineOptions, orientationDetector: LazyOrientationDetector) {
        self.options = options
        var stages: [any PageStage] = []
        if options.segment {
            stages.append(SegmentStage(documentMask: LazyDocumentMask.ifEnabled()))
            stages.append(RectifyStage(keepColor: options.mode == .color || !options.enhance))
        }
        if options.orient {
            stages.append(OrientStage(detector: orientationDetector, threshold: options.orientationThreshold))
        }
        if options.deskew { stages.append(DeskewStage()) }
        if options.dewarp { stages.append(DewarpStage()) }
        if options.enhance { stages.append(EnhanceStage(mode: options.mode)) }
        if options.scale { stages.append(ScaleStage()) }
        self.stages = stages
    }

    /// A pipeline with its own orientation engine (made when a page first needs it).
    public convenience init(options: PipelineOptions) {
        self.init(options: options, orientationDetector: LazyOrientationDetector())
    }

    /// Runs every stage on a decoded page; returns the image to recognize and the page's context.
    /// `observe` sees each stage's output (for `inspect --stages`).
    /// Each stage's input is released as soon as its output exists, unless the caller still holds the page.
    /// The page as it was before the first of `keepingBefore` that runs is kept in `PageContext.lessCorrected`.
    public func run(_ page: consuming DecodedPage, languages: [String] = ["eng"], keepingBefore: Set<CorrectionStage> = [],
                    observe: ((String, Pix) -> Void)? = nil)
        throws(PageFailure) -> (image: Pix, context: PageContext)
    {
        var context = PageContext(originalWidth: page.image.width, originalHeight: page.image.height,
                                  resolution: page.declaredResolution)
        context.languages = languages
        context.memoryBudget = page.memoryBudget
        context.record(Decoder.stage, page.findings)
        var image = page.image
        _ = consume page
        for stage in stages {
            if context.lessCorrected == nil, let kind = CorrectionStage(rawValue: stage.name), keepingBefore.contains(kind) {
                context.lessCorrected = image
            }
            let start = Clock.monotonicNanoseconds
            image = try stage.run(image, &context)
            observe?(stage.name, image)
            context.timings.append(StageTiming(stage: stage.name, milliseconds: Clock.milliseconds(since: start)))
        }
        return (image, context)
    }
}

extension LeptonicaError {
    /// This error as a page failure of `stage`: `out-of-memory` (retryable) when an allocation failed (Leptonica
    /// says "… malloc fail …" or "… calloc fail …" and returns no image; issue 37), else `internal-error`.
    func failure(_ stage: String) -> PageFailure {
        guard kind == .outOfMemory || isAllocationFailure else {
            return PageFailure(stage: stage, code: .internalError, message: description)
        }
        return PageFailure(stage: stage, code: .outOfMemory, message: "out of memory: \(description)", retryable: true)
    }

    /// Whether Leptonica's messages say an allocation failed.
    var isAllocationFailure: Bool { message.contains("alloc fail") }
}
