import FarmCore
import Leptonica

/// What a recognizer is asked to do with a page.
public struct RecognitionOptions: Sendable, Equatable {
    /// Stop recognizing a page after this long (nil: no limit).
    public var timeoutMilliseconds: Int?
    /// The page's name, given to the engine as its input file name.
    public var sourceName: String
    /// Alternative readings to keep per word (0: none).
    public var candidates: Int
    /// Custom words: recognized words that nearly match one are read as it.
    public var words: [String]
    /// Text lines smaller than this fraction of the page height are not read (nil: all).
    public var minTextHeight: Double?
    /// One reading, or three with the surest line kept (`PageOptions.level`).
    public var level: RecognitionLevel
    /// Custom words and Chinese punctuation applied after recognition (the engine's own word lists are chosen
    /// when it is made: `TesseractRecognizer.init`).
    public var languageCorrection: Bool
    /// At `fast`, weak pages are read again (`TesseractRecognizer+SecondReading.swift`).
    public var secondReading: Bool

    public init(timeoutMilliseconds: Int? = nil, sourceName: String = "", candidates: Int = 0,
                words: [String] = [], minTextHeight: Double? = nil, level: RecognitionLevel = .fast,
                languageCorrection: Bool = true, secondReading: Bool = true)
    {
        self.secondReading = secondReading
        self.level = level
        self.languageCorrection = languageCorrection
        self.timeoutMilliseconds = timeoutMilliseconds
        self.sourceName = sourceName
        self.candidates = candidates
        self.words = words
        self.minTextHeight = minTextHeight
    }
}


/// The OCR engine seam. One recognizer per page slot, created once and reused; used on its slot's thread only.
/// The page processor knows engines only through this protocol; `Engines` says which type each `--engine` makes.
public protocol PageRecognizer: AnyObject {
    /// A short name for logs, e.g. "tesseract 5.3.0 eng".
    var engineName: String { get }
    /// The engine and its version as results and documents name it (`PageResult.engine`, the documents'
    /// creator), e.g. "tesseract 5.3.0" or "PP-OCRv6-small+tiny (onnxruntime 1.32.0)".
    var engineVersion: String { get }
    /// Whether the engine reads the page as decoded as well as corrected (`DecodedPage.uncorrected`), so the
    /// processor keeps that image through the stages.
    var readsUncorrectedImage: Bool { get }
    /// Correction stages the engine reads better without: the page comes to it without them, whatever its options
    /// say (the neural engine sizes the page itself and reads gray levels that lighting correction flattens).
    var stagesLeftOut: Set<CorrectionStage> { get }
    /// Correction stages the engine may choose to read a page without (an automatic choice whose other engine leaves
    /// them out): the processor keeps the page as it was before the first of them (`DecodedPage.lessCorrected`).
    var stagesMaybeLeftOut: Set<CorrectionStage> { get }
    /// Reads one page. Rendering is not the recognizer's: `PageProcessor` renders the documents asked for.
    /// The result's `engine` is the engine that read it (`engineVersion`, or the one an automatic choice made).
    func recognize(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult
}

extension PageRecognizer {
    public var engineVersion: String { engineName }
    public var readsUncorrectedImage: Bool { false }
    public var stagesLeftOut: Set<CorrectionStage> { [] }
    public var stagesMaybeLeftOut: Set<CorrectionStage> { [] }
}

/// Returns an empty result at once: for measuring everything around OCR.
public final class NullRecognizer: PageRecognizer {
    public init() {}
    public var engineName: String { "none" }

    public func recognize(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult {
        .empty(width: page.image.width, height: page.image.height, resolution: page.declaredResolution)
    }
}
