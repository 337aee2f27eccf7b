import FarmCore
import FarmExport
import FarmPipeline
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// `ocrfarm ocr`: OCR image files in this process, with no store.
struct OCRCommand: Command {
    static let name = "ocr"
    static let abstract = "OCR image files here and now, without a store (like `tesseract IMG stdout`, but faster)."
    static let arguments = "IMAGE|PDF..."
    static let options: [OptionSpec] = [
        OptionSpec("--lang", value: "LANGS",
                   "Languages in priority order, joined by '+', or auto (chosen per page from its script). Default: eng."),
        OptionSpec("--format", value: "FORMAT", "Output: text, json, hocr, alto, page (PAGE XML) or pdf (default: text)."),
        OptionSpec("--out", value: "PATH",
                   "Write the output to this file instead of standard output (a device or FIFO is written in place; --format pdf refuses a terminal)."),
        OptionSpec("--jobs", value: "N", "Pages recognized at once, one engine each (default: the number of cores)."),
        OptionSpec("--timeout", value: "SECONDS", "Give up on a page after this long (default: no limit)."),
    ] + DecodeLimitOptions.specs + CorrectionOptions.specs
    static let discussion = """
    A multi-page TIFF gives one page per image, a PDF one page per page (rendered at the resolution of the
    page's images, at most 600 dpi; pages without a large image at 300 dpi). With several pages, text pages are separated by form feeds,
    JSON holds {"pages": [...]}, hOCR and ALTO hold one page element each, and the PDF has one page per image.
    Bad files are reported one line each (file and reason) and the others still go through.

    Exit status: 0 all pages read; 65 some pages failed; 66 no page could be read; 64 bad usage;
    69 the engine or language data is unavailable; 10 all pages read, but the PDF asked to be PDF/A-2B could not
    be made one (written as a plain PDF; a warning names the file, the page and why).
    """

    let paths: [String]
    let languages: [String]
    let format: OutputFormat
    let outPath: String?
    let jobs: Int
    let timeoutMilliseconds: Int?
    let maxPixels: Int
    let pageMemory: Int
    let engine: EngineKind
    let pageOptions: PageOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        paths = arguments.positionals
        guard !paths.isEmpty else { throw UsageError(message: "no image files given") }
        languages = (arguments.string("--lang") ?? "eng").split(separator: "+").map(String.init)
        guard !languages.isEmpty, languages.allSatisfy({ !$0.isEmpty }) else {
            throw UsageError(message: "--lang takes languages joined by '+', e.g. chi_sim+eng")
        }
        let formatName = try arguments.choice("--format", OutputFormat.allCases.map(\.rawValue) + ["txt"]) ?? "text"
        format = OutputFormat(exportName: formatName)!
        outPath = arguments.string("--out")
        jobs = try arguments.int("--jobs", range: 1...256) ?? NativeThread.processorCount
        timeoutMilliseconds = try arguments.double("--timeout", range: 0.001...86_400).map { Int($0 * 1000) }
        (maxPixels, pageMemory) = try DecodeLimitOptions.parse(arguments)
        pageOptions = try CorrectionOptions.apply(arguments, to: PageOptions(languages: languages,
                                                                             timeoutMilliseconds: timeoutMilliseconds),
                                                  allowingNoEngine: true)
        // --engine none: everything but the reading is measured.
        engine = CorrectionOptions.slotEngine(arguments)
        if format == .page && arguments.positionals.count > 1 && !(outPath.map(FileSystem.isDirectory) ?? false) {
            throw UsageError(message: "PAGE XML holds one page per file: for several images give --out an existing folder")
        }
        if format == .pdf && outPath == nil && Console.outputIsTerminal {
            throw UsageError(message: "--format pdf writes binary data; give --out FILE or redirect standard output")
        }
        if format == .pdf, let outPath, FileSystem.isTerminal(outPath) {
            throw UsageError(message: "--format pdf writes binary data, and --out \(outPath) is a terminal; give a file")
        }
    }

    func run() throws -> ExitStatus {
        if engine == .page { try EngineCheck.engine(pageOptions.engine, languages: languages) }
        if pageOptions.pdfImage == .corrected && format == .pdf {
            // A PDF page is kept with its own content, never replaced by a picture of it: turned upright by /Rotate.
            for path in paths where Self.isPDF(path) {
                throw CommandFailure(.usage, "--pdf-image corrected does not apply to PDF input (\(path)): a PDF's pages keep "
                                     + "their own content, with the text laid over it, and are turned upright by /Rotate when the "
                                     + "orient stage is sure; leave --pdf-image out for PDFs")
            }
        }
        let writer = try Self.writer(OutputWriter(format: format, path: outPath, languages: pageOptions.languages,
                                                  pdfType: pageOptions.pdfType, replacingEarlier: pageOptions.pdfText == .redo,
                                                  creator: Engines.documentCreator(for: pageOptions.engine), warn: Console.error))
        let engine = self.engine
        let limits = DecodeLimits(maxPixels: maxPixels, pageMemory: pageMemory)
        let batch = LocalBatch(
            paths: paths, slots: jobs, outputs: writer.pageRenderings, pageOptions: pageOptions,
            makeProcessor: { PageProcessor(engine: engine, limits: limits) })

        var filesWithPages = Set<String>()
        var filesWithFailures = Set<String>()
        do throws(PageFailure) {
            try batch.run { report in
                switch report.outcome {
                case .success(let page):
                    filesWithPages.insert(report.path)
                    if let missing = page.result.findings[PageResult.missingLanguageKey], let message = missing["message"]?.stringValue {
                        let number = report.pageCount > 1 ? " page \(report.page + 1)" : ""
                        Console.error("ocrfarm: warning: \(report.path)\(number): \(message)")
                    }
                case .failure(let failure):
                    filesWithFailures.insert(report.path)
                    let page = report.pageCount > 1 ? " page \(report.page + 1)" : ""
                    Console.error("ocrfarm: \(report.path)\(page): \(failure.code): \(failure.message)")
                }
                writer.add(OutputPage(report))
            }
        } catch {
            throw CommandFailure(.unavailable, error.message)
        }
        try Self.writer(writer.finish())
        if filesWithFailures.isEmpty { return writer.notArchival ? .notArchival : .success }
        return filesWithPages.isEmpty ? .noInput : .dataError
    }
}

extension OCRCommand {
    /// `OutputWriter`'s errors as exit statuses: 73 the output cannot be made, 74 not written, 64 PAGE XML of
    /// several pages without a folder, 70 the PDF not made.
    static func writer<T>(_ call: @autoclosure () throws -> T) throws -> T {
        do {
            return try call()
        } catch let error as OutputError {
            let status: ExitStatus = switch error.kind {
            case .cannotCreate: .cannotCreate
            case .write: .ioError
            case .needsFolder: .usage
            case .pdf: .software
            }
            throw CommandFailure(status, error.message)
        }
    }

    /// Whether the file at `path` is a PDF: `%PDF-` in its first kilobyte (where readers look for it).
    static func isPDF(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        let marker = Array("%PDF-".utf8)
        guard count >= marker.count else { return false }
        bytes = Array(bytes[0..<count])
        return (0...(bytes.count - marker.count)).contains { bytes[$0..<$0 + marker.count].elementsEqual(marker) }
    }
}

/// Checks the engine's prerequisites before any page is read, so a missing language is one clear error.
/// How large a page may be: `--max-pixels` and `--page-memory`, the same in `ocr`, `worker` and `run` (which
/// passes them on to its workers).
enum DecodeLimitOptions {
    static let specs: [OptionSpec] = [
        OptionSpec("--max-pixels", value: "N", "Refuse images larger than N pixels (default: 100000000)."),
        OptionSpec("--page-memory", value: "MB",
                   "Memory one page may take, in MiB (default: 384); a larger page is read as gray or refused (image-too-large)."),
    ]

    /// The pixel limit and the page memory budget in bytes.
    static func parse(_ arguments: ParsedArguments) throws(UsageError) -> (maxPixels: Int, pageMemory: Int) {
        (try arguments.int("--max-pixels", range: 1...Int(Int32.max)) ?? 100_000_000,
         try arguments.int("--page-memory", range: 16...1_048_576).map { $0 << 20 } ?? DecodeLimits.defaultPageMemory)
    }

    /// The limits; a worker's budget is fitted to its memory limits unless `--page-memory` was given.
    static func limits(_ arguments: ParsedArguments) throws(UsageError) -> DecodeLimits {
        let (maxPixels, pageMemory) = try parse(arguments)
        var limits = DecodeLimits(maxPixels: maxPixels, pageMemory: pageMemory)
        limits.budgetFromLimits = arguments.string("--page-memory") == nil
        return limits
    }

    /// The options as given, for a worker started by `run`.
    static func passedOn(_ arguments: ParsedArguments) -> [String] {
        ["--max-pixels", "--page-memory"].flatMap { name in arguments.string(name).map { [name, $0] } ?? [] }
    }
}

enum EngineCheck {
    /// The engine's own prerequisites (the neural engine's runtime and models), then the languages'.
    static func engine(_ engine: ReadingEngine, languages: [String]) throws {
        if engine != .tesseract {
            do throws(NeuralModelsError) {
                _ = try NeuralModels.locate()
            } catch {
                // auto, the default, reads with Tesseract alone where the neural engine is not installed at all; an
                // install in part is an error for it too.
                guard engine == .auto && error.nothingInstalled else {
                    throw CommandFailure(.unavailable, "--engine \(engine.rawValue): \(error.description)")
                }
                Console.error("note: the neural engine is not installed (Scripts/install-neural): --engine auto reads every page with Tesseract")
            }
        }
        try self.languages(languages)
    }

    static func languages(_ languages: [String]) throws {
        let installed = TesseractInfo.installedLanguages
        if languages.contains(PageOptions.automaticLanguage) {
            guard languages.count == 1 else {
                throw UsageError(message: "--lang auto chooses the languages itself: give it alone, not with \(languages.filter { $0 != PageOptions.automaticLanguage }.joined(separator: "+"))")
            }
            guard !installed.isEmpty else { throw CommandFailure(.unavailable, "--lang auto: no language data is installed") }
            return
        }
        let missing = languages.filter { !installed.contains($0) }
        guard missing.isEmpty else {
            // A code Tesseract has is one package away; a typo gets the nearest code instead of a package that
            // does not exist.
            let unknown = missing.filter { !tesseractLanguages.contains($0) }
            if !unknown.isEmpty {
                let hints = unknown.map { code in
                    let near = (installed + tesseractLanguages.sorted()).min {
                        Commands.editDistance(code, $0) < Commands.editDistance(code, $1)
                    }
                    return "\(code)" + (near.map { Commands.editDistance(code, $0) <= 2 ? " (did you mean \($0)?)" : "" } ?? "")
                }
                throw CommandFailure(.unavailable, "not a Tesseract language: \(hints.joined(separator: ", ")); "
                                     + "installed: \(installed.joined(separator: ", "))")
            }
            throw CommandFailure(.unavailable, "language data not installed: \(missing.joined(separator: ", ")) "
                                 + "(installed: \(installed.joined(separator: ", ")); on Debian: apt-get install "
                                 + missing.map { "tesseract-ocr-\($0.replacingUnderscores)" }.joined(separator: " ") + ")")
        }
    }

    /// The languages Tesseract's models exist for (tessdata, tessdata_fast and tessdata_best; Debian packages each
    /// as tesseract-ocr-CODE with - for _).
    static let tesseractLanguages: Set<String> = Set("""
        afr amh ara asm aze aze_cyrl bel ben bod bos bre bul cat ceb ces chi_sim chi_sim_vert chi_tra chi_tra_vert chr \
        cos cym dan deu div dzo ell eng enm epo equ est eus fao fas fil fin fra frk frm fry gla gle glg grc guj hat heb \
        hin hrv hun hye iku ind isl ita ita_old jav jpn jpn_vert kan kat kat_old kaz khm kir kmr kor kor_vert lao lat \
        lav lit ltz mal mar mkd mlt mon mri msa mya nep nld nor oci ori osd pan pol por pus que ron rus san sin slk slv \
        snd spa spa_old sqi srp srp_latn sun swa swe syr tam tat tel tgk tha tir ton tur uig ukr urd uzb uzb_cyrl vie \
        yid yor
        """.split(whereSeparator: \.isWhitespace).map(String.init))
}

extension String {
    fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }).lowercased() }
}

extension OutputPage {
    /// A page of `LocalBatch` as the writer takes it: its result and its one-page PDF when rendered.
    init(_ report: PageReport) {
        self.init(path: report.path, page: report.page, pageCount: report.pageCount, isPDF: report.isPDF,
                  outcome: report.outcome.map(\.result), pdf: try? report.outcome.get().rendering(.pdf))
    }
}
