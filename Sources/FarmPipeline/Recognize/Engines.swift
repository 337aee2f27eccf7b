import FarmCore
import FarmRender

/// What a page's recognizer is made for: the languages it reads, and whether language knowledge may change what
/// it read (`PageOptions.languageCorrection`).
public struct EngineRequest: Sendable, Hashable {
    public var languages: [String]
    public var languageCorrection: Bool

    public init(languages: [String], languageCorrection: Bool = true) {
        self.languages = languages
        self.languageCorrection = languageCorrection
    }
}

/// The engines a page can be read by (`--engine`), each a `PageRecognizer` type made by one maker: the page
/// processor asks for an engine by name and never looks at which it got. A new engine is one new recognizer type
/// and one entry here; tests give the processor scripted engines the same way.
public struct Engines: Sendable {
    public typealias Maker = @Sendable (EngineRequest) throws(PageFailure) -> any PageRecognizer

    private let makers: [ReadingEngine: Maker]

    public init(_ makers: [ReadingEngine: Maker]) {
        self.makers = makers
    }

    /// A recognizer of `engine` for `request`; an engine without a maker is a page failure naming it.
    public func make(_ engine: ReadingEngine, _ request: EngineRequest) throws(PageFailure) -> any PageRecognizer {
        guard let maker = makers[engine] else {
            throw PageFailure(stage: TesseractRecognizer.stage, code: .ocrFailed,
                              message: "the \(engine.rawValue) engine is not available in this process")
        }
        return try maker(request)
    }

    /// Tesseract, the neural engine (ONNX Runtime and PP-OCRv6, installed by `Scripts/install-neural`), and the
    /// choice between them per page (`AutomaticRecognizer`).
    public static let standard = Engines([
        .tesseract: { request throws(PageFailure) in
            try TesseractRecognizer(languages: request.languages, languageCorrection: request.languageCorrection)
        },
        .neural: { _ throws(PageFailure) in
            try NeuralRecognizer(models: NeuralModels.installed())
        },
        .auto: { request throws(PageFailure) in
            try AutomaticRecognizer(
                tesseract: TesseractRecognizer(languages: request.languages, languageCorrection: request.languageCorrection),
                neural: automaticNeural(), languages: request.languages)
        },
    ])

    /// The neural engine as `auto` makes it: nil when it is not installed at all (`auto` then reads every page with
    /// Tesseract, as it must on a machine without the optional runtime), else a maker that fails the page when the
    /// install is incomplete (a broken install is an error to mend, not a reason to read worse in silence).
    static func automaticNeural() -> (() throws(PageFailure) -> any NeuralReader)? {
        do throws(NeuralModelsError) {
            let models = try NeuralModels.locate()
            return { () throws(PageFailure) in try NeuralRecognizer(models: models) }
        } catch {
            // An install in part: the page fails as it does with `--engine neural` (`installed()` says what is missing).
            return error.nothingInstalled ? nil : { () throws(PageFailure) in try NeuralRecognizer(models: NeuralModels.installed()) }
        }
    }
}

extension Engines {
    /// The engine and version a document of pages read with `engine` names before its pages are read (a page's own
    /// result names the engine that read it: `PageResult.engine`).
    public static func documentCreator(for engine: ReadingEngine) -> DocumentCreator {
        let neural = NeuralModels.engineName(runtimeVersion: NeuralModels.runtimeVersion)
        switch engine {
        case .tesseract: return DocumentCreator(engine: TesseractRecognizer.version)
        case .neural: return DocumentCreator(engine: neural)
        case .auto: return DocumentCreator(engine: "\(TesseractRecognizer.version) or \(neural), chosen per page")
        }
    }
}

extension NeuralModels {
    /// The installed models, or the page failure that says how to install them.
    static func installed() throws(PageFailure) -> NeuralModels {
        do throws(NeuralModelsError) {
            return try locate()
        } catch {
            throw PageFailure(stage: TesseractRecognizer.stage, code: .ocrFailed, message: error.description)
        }
    }
}

extension NeuralRecognizer: NeuralReader {
    /// The detector sizes the page itself (enlarging it for Tesseract only costs time) and the recognizer reads gray
    /// levels that lighting correction flattens: SROIE F1 0.936 with every stage, 0.945 without these two, at about
    /// 0.6× the CPU (helper measurement, `ocrfarm ocr --engine neural --skip enhance,scale`).
    public static let correctionsLeftOut: Set<CorrectionStage> = [.scale, .enhance]
    public var stagesLeftOut: Set<CorrectionStage> { Self.correctionsLeftOut }

    /// The recognizer's dictionary, one character a symbol (a few symbols are longer sequences and are left out).
    public var symbols: Set<Character> { Set(recognizer.decoder.symbols.compactMap { $0.count == 1 ? $0.first : nil }) }
}
