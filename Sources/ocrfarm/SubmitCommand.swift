import FarmCore
import FarmIngest
import FarmPipeline
import FarmRuntime
import FarmStore

/// Options shared by commands that use a store.
enum StoreOption {
    static let spec = OptionSpec("--store", value: "PATH", "The store file (default: $OCRFARM_STORE, else ./ocrfarm.db).")

    static func path(_ arguments: ParsedArguments) -> String { arguments.string("--store") ?? "ocrfarm.db" }
}

/// Options that describe how submitted pages are read; shared by `submit` and `run`.
enum SubmitOptionSpecs {
    static let all: [OptionSpec] = [
        OptionSpec("--document", value: "NAME", "Put all the files into one document with this name (pages in order)."),
        OptionSpec("--document-per", value: "file|folder",
                   "file: each file found is a document (default); folder: the loose page images of each folder are one document, named after the folder (PDFs and multi-page TIFFs stay one document each)."),
        OptionSpec("--include", value: "GLOB", repeatable: true,
                   "Take only files in the folders that match (e.g. '*.tif'; with a '/', matched against the path below the folder; case ignored)."),
        OptionSpec("--exclude", value: "GLOB", repeatable: true, "Leave out files and folders that match (e.g. 'drafts', '*_thumb.jpg')."),
        OptionSpec("--verbose", "List every file left out (not images, excluded, hidden), not just the counts."),
        OptionSpec("--priority", value: "N", "Higher priorities are read first (default: 0)."),
        OptionSpec("--lang", value: "LANGS",
                   "Languages in priority order, joined by '+', or auto (chosen per page from its script). Default: eng."),
        OptionSpec("--timeout", value: "SECONDS", "Give up on a page after this long (default: no limit)."),
        OptionSpec("--force", "Submit files again even if the same content was submitted before."),
        OptionSpec("--replace", "A file changed since it was submitted replaces its earlier document (deleted), instead of joining it."),
        OptionSpec("--outputs", value: "LIST",
                   "Renderings stored with each page as made at OCR time: pdf, hocr, alto, page, json (comma-separated), or none; hOCR, ALTO, PAGE and JSON not listed are rendered from the stored reading when exported or served. Default: pdf."),
    ] + CorrectionOptions.specs

    static func parse(_ arguments: ParsedArguments, allowingNoEngine: Bool = false) throws(UsageError) -> SubmitOptions {
        let languages = (arguments.string("--lang") ?? "eng").split(separator: "+").map(String.init)
        guard !languages.isEmpty, languages.allSatisfy({ !$0.isEmpty }) else {
            throw UsageError(message: "--lang takes languages joined by '+', e.g. chi_sim+eng")
        }
        let timeout = try arguments.double("--timeout", range: 0.001...86_400).map { Int($0 * 1000) }
        var pageOptions = try CorrectionOptions.apply(arguments, to: PageOptions(languages: languages, timeoutMilliseconds: timeout),
                                                      allowingNoEngine: allowingNoEngine)
        if let list = arguments.string("--outputs") {
            let names = list == "none" ? [] : list.split(separator: ",").map { String($0).trimmed }
            for name in names where !OutputFormat.storable.map(\.rawValue).contains(name) {
                throw UsageError(message: "--outputs takes \(OutputFormat.storable.map(\.rawValue).joined(separator: ", ")) or none, not '\(name)'")
            }
            pageOptions.outputs = OutputFormat.storable.filter { names.contains($0.rawValue) }
        }
        let grouping = try arguments.choice("--document-per", DocumentGrouping.allCases.map(\.rawValue))
            .flatMap(DocumentGrouping.init(rawValue:)) ?? .file
        if grouping != .file && arguments.string("--document") != nil {
            throw UsageError(message: "--document puts every file into one document; leave out --document-per")
        }
        for pattern in arguments.strings("--include") + arguments.strings("--exclude") where pattern.isEmpty {
            throw UsageError(message: "--include and --exclude take a pattern such as '*.tif', not an empty one")
        }
        var options = SubmitOptions(documentName: arguments.string("--document"),
                                    priority: try arguments.int("--priority", range: -1_000_000...1_000_000) ?? 0,
                                    pageOptions: pageOptions, force: arguments.flag("--force"), grouping: grouping,
                                    filter: PathFilter(include: arguments.strings("--include"), exclude: arguments.strings("--exclude")))
        options.replace = arguments.flag("--replace")
        return options
    }
}

/// `ocrfarm submit`: add files and folders to the store's queue.
struct SubmitCommand: Command {
    static let name = "submit"
    static let abstract = "Add image files, PDFs and folders to the queue."
    static let arguments = "PATH..."
    static let options: [OptionSpec] = [StoreOption.spec] + SubmitOptionSpecs.all
    static let discussion = """
    Folders are read recursively, files in natural order (page2 before page10). What a file is comes from its
    content, not its name: images (PNG, JPEG, TIFF, PNM, BMP, GIF, JPEG 2000, WebP) give one page each, or one per
    page of a multi-page TIFF; PDFs give one page per page, rendered by the worker at the resolution of the page's
    images (300 dpi without a large one), the page PDF being the page itself with the text laid over it. In a folder, a file
    that is neither by content nor by name (notes.txt, Thumbs.db, a .json) is left out and counted, as are hidden
    files (names starting with '.'); --verbose lists them. A file named as an image or PDF, or named on the command
    line, that is not one is recorded as a failed page with the reason, so `status` shows it. Documents are named
    by their path below the submitted folder (box17/folder3/p1.png), a file named on the command line by its file
    name. A file whose content was
    submitted before is reported and skipped unless --force. A file that cannot be read (no permission, an I/O
    error) is recorded as a failed page (unreadable): submit it again once it can be read, and its pages
    replace that failed page. A file changed since it was submitted (new content, same path) becomes a new document
    beside the earlier one, or replaces it with --replace (ocrfarm delete removes a document). Paths that are not
    files (missing, symbolic link loops, FIFOs, devices) are reported and never opened. The rest is still submitted.

    Exit status: 0 all submitted; 65 some files were unusable (recorded as failed) or not files; 66 nothing was
    recorded (only paths that are not files), or not an ocrfarm store; 69 a language is not installed; 73 the
    store cannot be made or written (its folder is missing or not writable); 74 the disk is full; 76 the store is
    damaged.
    """

    let storePath: String
    let paths: [RawPath]
    let options: SubmitOptions
    let verbose: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard !arguments.positionals.isEmpty else { throw UsageError(message: "no files or folders given") }
        storePath = StoreOption.path(arguments)
        paths = RawArguments.paths(arguments.positionals)
        options = try SubmitOptionSpecs.parse(arguments)
        verbose = arguments.flag("--verbose")
    }

    func run() throws -> ExitStatus {
        try EngineCheck.languages(options.pageOptions.languages)
        let store = try Store(path: storePath)
        let report = try Submitter.submit(paths, options: options, store: store, verbose: verbose)
        return Submitter.exitStatus(report)
    }
}

/// Submission with a progress bar and a printed report, for `submit` and `run`.
enum Submitter {
    static func submit(_ paths: [RawPath], options: SubmitOptions, store: Store, verbose: Bool = false) throws -> SubmitReport {
        let bar = ProgressLine(enabled: Console.errorIsTerminal)
        let report = try Submission(store: store, options: options).submit(paths) { done, total in
            if total >= 200 { bar.show("submitting: \(done)/\(total) files") }
        }
        bar.clear()
        // One line per file, but not thousands: a long list ends with a count.
        let limit = 20
        for (path, reason) in report.problems.prefix(limit) { Console.error("ocrfarm: \(path): \(reason)") }
        if report.problems.count > limit { Console.error("ocrfarm: … and \(report.problems.count - limit) more paths not submitted") }
        for (path, failure) in report.invalid.prefix(limit) { Console.error("ocrfarm: \(path): \(failure.code): \(failure.message)") }
        if report.invalid.count > limit {
            Console.error("ocrfarm: … and \(report.invalid.count - limit) more unusable files (ocrfarm status shows them by code)")
        }
        // Files submitted before are one line each only with --verbose: a second run over a big folder would
        // otherwise print every file again.
        if verbose || report.skipped.count == 1 {
            for (path, existing, _) in report.skipped.prefix(verbose ? Int.max : limit) {
                Console.error("ocrfarm: \(path): already submitted as '\(existing)'; skipped (use --force to submit again)")
            }
        }
        for (path, earlier, replaced) in report.changed.prefix(limit) {
            Console.error(replaced ? "ocrfarm: \(path): changed since it was submitted; replaces '\(Printable.text(earlier))'"
                : "ocrfarm: \(path): changed since it was submitted as '\(Printable.text(earlier))'; submitted as a new document beside it (--replace replaces it)")
        }
        for path in report.nowReadable.prefix(limit) { Console.error("ocrfarm: \(path): readable now; replaces its failed (unreadable) page") }
        for (path, reason) in report.notReplaced.prefix(limit) {
            Console.error("ocrfarm: \(path): its earlier document is not replaced: \(reason); submitted beside it")
        }
        if verbose {
            for path in report.notImages { Console.error("ocrfarm: \(path): left out: neither an image nor a PDF") }
            for path in report.excluded { Console.error("ocrfarm: \(path): left out by --include/--exclude") }
        }
        var summary = "submitted \(report.added.count) document\(report.added.count == 1 ? "" : "s"), \(report.pages) page\(report.pages == 1 ? "" : "s")"
        var notes: [String] = []
        if !report.skipped.isEmpty {
            notes.append("\(report.skipped.count) already submitted" + (report.skipped.count > 1 && !verbose ? " (--verbose lists them; --force submits them again)" : ""))
        }
        if !report.notImages.isEmpty {
            let examples = report.notImages.prefix(3).map { Printable.text(RawPath(bytes: $0.lastComponent).description) }.joined(separator: ", ")
            notes.append("\(report.notImages.count) not images or PDFs left out, e.g. \(examples)\(report.notImages.count > 3 ? ", …" : "")")
        }
        if !report.excluded.isEmpty { notes.append("\(report.excluded.count) left out by --include/--exclude") }
        if !report.invalid.isEmpty { notes.append("\(report.invalid.count) unusable, recorded as failed") }
        if !report.problems.isEmpty { notes.append("\(report.problems.count) not submitted (not files)") }
        if report.hidden > 0 {
            let examples = report.hiddenExamples.map { Printable.text($0.description) }.joined(separator: ", ")
            notes.append("\(report.hidden) hidden left out: names starting with '.', e.g. \(examples)\(report.hidden > 3 ? ", …" : ""); "
                + "name them to submit them")
        }
        if !notes.isEmpty { summary += " (" + notes.joined(separator: "; ") + ")" }
        Console.error(summary + " into \(store.path)")
        return report
    }

    static func exitStatus(_ report: SubmitReport) -> ExitStatus {
        if report.problems.isEmpty && report.invalid.isEmpty { return .success }
        return report.added.isEmpty && report.skipped.isEmpty ? .noInput : .dataError
    }
}

/// Paths from the command line as the system gave them (bytes that need not be UTF-8).
enum RawArguments {
    /// Matches positional arguments back to the raw argv entries they came from.
    static func paths(_ positionals: [String]) -> [RawPath] {
        var raw = RawPath.arguments.dropFirst(2)
        return positionals.map { text in
            if let index = raw.firstIndex(where: { String(decoding: $0.bytes, as: UTF8.self) == text }) {
                let path = raw[index]
                raw.remove(at: index)
                return path
            }
            return RawPath(text)
        }
    }
}

/// One line of progress on a terminal, redrawn in place.
final class ProgressLine {
    private let enabled: Bool
    private var shown = false
    private var lastDraw: Int64 = 0

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ text: String, force: Bool = false) {
        guard enabled else { return }
        let now = Clock.monotonicMilliseconds
        guard force || now - lastDraw >= 100 else { return }
        lastDraw = now
        Console.errorRaw("\r\u{1B}[2K" + text)
        shown = true
    }

    func clear() {
        guard enabled && shown else { return }
        Console.errorRaw("\r\u{1B}[2K")
        shown = false
    }
}

/// How pages are corrected before recognition; shared by `ocr`, `submit` and `run`.
enum CorrectionOptions {
    static let specs: [OptionSpec] = [
        OptionSpec("--mode", value: "MODE", "Look of the page image kept for the PDF: color, gray or bw (default: gray)."),
        OptionSpec("--skip", value: "STAGES", repeatable: true,
                   "Leave out correction stages: segment, orient, deskew, dewarp, scale, enhance (comma-separated)."),
        OptionSpec("--raw", "Leave out every correction stage: recognize the page as the file has it."),
        OptionSpec("--candidates", value: "N", "Keep up to N alternative readings per word, with confidences (default: 0)."),
        OptionSpec("--words", value: "FILE", "Custom words, one per line (names, terms, codes): near misses are read as them."),
        OptionSpec("--min-text-height", value: "F",
                   "Ignore text smaller than this fraction of the page height, e.g. 0.02 (faster; footnotes drop)."),
        OptionSpec("--level", value: "LEVEL",
                   "fast (one reading) or accurate (three readings, the surest line kept; fewer errors, under half the speed). Default: fast."),
        OptionSpec("--no-second-reading",
                   "Do not read weak pages again (other image variants, the surest reading of each line kept; at either level)."),
        OptionSpec("--image-dpi", value: "N",
                   "The scans' resolution, for files that do not say it or say it wrong (sets the PDF page size; default: the file's, else inferred from the page's shape and text size)."),
        OptionSpec("--pdf-type", value: "TYPE",
                   "pdfa-2b (PDF/A-2B: XMP metadata, sRGB OutputIntent, every font embedded; default) or pdf (plain)."),
        OptionSpec("--pdf-image", value: "IMAGE",
                   "original (the file's own image, losslessly, at its resolution) or corrected (the page rectified, upright and deskewed). Default: original for scans, corrected for photos. A PDF's page keeps its own content (turned upright by /Rotate when orient is sure): ocr refuses corrected for PDF input, the farm notes it in the page's pdf_image finding."),
        OptionSpec("--pdf-text", value: "MODE",
                   "PDF pages that have text already: skip (kept as they are, their text stored; default), redo (read again, replacing ocrfarm's earlier text layer) or force (read, and text laid over theirs)."),
        OptionSpec("--no-language-correction",
                   "Keep the characters as read: no word lists in the engine, no custom words, no Chinese punctuation (codes, serial numbers)."),
        OptionSpec("--engine", value: "ENGINE",
                   "auto (default: per page, Tesseract where its first reading is sure, else the neural engine where it writes the page's languages; Tesseract alone where the neural engine is not installed), tesseract, or neural (PP-OCRv6 through ONNX Runtime: receipts, tables, small or faint print; Scripts/install-neural installs it)."),
    ]

    /// `--engine none`: the commands that measure everything but reading (`ocr`, `run`) take it besides the engines.
    static let noEngine = "none"

    /// The options `arguments` give, over `options`; `allowingNoEngine`: `--engine none` is taken (and leaves the
    /// engine as it is: the caller runs the null engine).
    static func apply(_ arguments: ParsedArguments, to options: PageOptions, allowingNoEngine: Bool = false)
        throws(UsageError) -> PageOptions
    {
        var options = options
        options.imageMode = try arguments.choice("--mode", ImageMode.allCases.map(\.rawValue)).flatMap(ImageMode.init(rawValue:)) ?? .gray
        var skipped = Set<CorrectionStage>()
        for name in arguments.strings("--skip") {
            guard let stage = CorrectionStage(rawValue: name) else {
                throw UsageError(message: "--skip takes \(CorrectionStage.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'")
            }
            skipped.insert(stage)
        }
        if arguments.flag("--raw") { skipped = Set(CorrectionStage.allCases) }
        options.skippedStages = CorrectionStage.allCases.filter { skipped.contains($0) }
        options.candidates = try arguments.int("--candidates", range: 0...PageOptions.maximumCandidates) ?? 0
        if let path = arguments.string("--words") {
            guard let text = try? FileSystem.readText(path) else {
                throw UsageError(message: "--words: cannot read \(path)")
            }
            let words = text.split(whereSeparator: \.isNewline).map { String($0).trimmed }.filter { !$0.isEmpty }
            guard words.count <= PageOptions.maximumWords else {
                throw UsageError(message: "--words: \(path) has \(words.count) words; at most \(PageOptions.maximumWords)")
            }
            options.words = words
        }
        options.minTextHeight = try arguments.double("--min-text-height", range: 0.0001...0.5)
        options.level = try arguments.choice("--level", RecognitionLevel.allCases.map(\.rawValue))
            .flatMap(RecognitionLevel.init(rawValue:)) ?? .fast
        options.languageCorrection = !arguments.flag("--no-language-correction")
        options.secondReading = !arguments.flag("--no-second-reading")
        options.imageDPI = try arguments.int("--image-dpi", range: PageOptions.imageDPIRange)
        options.pdfType = try arguments.choice("--pdf-type", PDFType.allCases.map(\.rawValue)).flatMap(PDFType.init(rawValue:)) ?? .pdfa2b
        options.pdfImage = try arguments.choice("--pdf-image", PDFImageChoice.allCases.map(\.rawValue)).flatMap(PDFImageChoice.init(rawValue:))
        options.pdfText = try arguments.choice("--pdf-text", PDFTextMode.allCases.map(\.rawValue)).flatMap(PDFTextMode.init(rawValue:)) ?? .skip
        options.engine = try engine(arguments, allowingNone: allowingNoEngine) ?? .defaultChoice
        return options
    }

    /// Whether slots read pages (`--engine none`: they return empty results at once, to measure the rest).
    static func slotEngine(_ arguments: ParsedArguments) -> EngineKind {
        arguments.string("--engine") == noEngine ? .none : .page
    }

    /// The engine `--engine` names; nil when not given, or when it is `none` and `allowingNone`.
    static func engine(_ arguments: ParsedArguments, allowingNone: Bool) throws(UsageError) -> ReadingEngine? {
        let names = ReadingEngine.allCases.map(\.rawValue) + (allowingNone ? [noEngine] : [])
        return try arguments.choice("--engine", names).flatMap(ReadingEngine.init(rawValue:))
    }
}
