import FarmCore
import FarmIngest
import FarmPipeline
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
        OptionSpec("--priority", value: "N", "Higher priorities are read first (default: 0)."),
        OptionSpec("--lang", value: "LANGS",
                   "Languages in priority order, joined by '+', or auto (chosen per page from its script). Default: eng."),
        OptionSpec("--timeout", value: "SECONDS", "Give up on a page after this long (default: no limit)."),
        OptionSpec("--force", "Submit files again even if the same content was submitted before."),
        OptionSpec("--outputs", value: "LIST",
                   "Renderings stored with each page: pdf, hocr, alto, page, json (comma-separated), or none. Default: all."),
    ] + CorrectionOptions.specs

    static func parse(_ arguments: ParsedArguments) throws(UsageError) -> SubmitOptions {
        let languages = (arguments.string("--lang") ?? "eng").split(separator: "+").map(String.init)
        guard !languages.isEmpty, languages.allSatisfy({ !$0.isEmpty }) else {
            throw UsageError(message: "--lang takes languages joined by '+', e.g. chi_sim+eng")
        }
        let timeout = try arguments.double("--timeout", range: 0.001...86_400).map { Int($0 * 1000) }
        var pageOptions = try CorrectionOptions.apply(arguments, to: PageOptions(languages: languages, timeoutMilliseconds: timeout))
        if let list = arguments.string("--outputs") {
            let names = list == "none" ? [] : list.split(separator: ",").map { String($0).trimmed }
            for name in names where !OutputFormat.storable.map(\.rawValue).contains(name) {
                throw UsageError(message: "--outputs takes \(OutputFormat.storable.map(\.rawValue).joined(separator: ", ")) or none, not '\(name)'")
            }
            pageOptions.outputs = OutputFormat.storable.filter { names.contains($0.rawValue) }
        }
        return SubmitOptions(documentName: arguments.string("--document"),
                             priority: try arguments.int("--priority", range: -1_000_000...1_000_000) ?? 0,
                             pageOptions: pageOptions, force: arguments.flag("--force"))
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
    page of a multi-page TIFF; PDFs give one page per page, rasterized at 300 dpi by the worker. Files that are
    neither are recorded as failed pages with the reason, so `status` shows them. A file whose content was
    submitted before is reported and skipped unless --force. A file that cannot be read (no permission, an I/O
    error) is recorded as a failed page (unreadable): submit it again once it can be read. Paths that are not
    files (missing, symbolic link loops, FIFOs, devices) are reported and never opened. The rest is still submitted.

    Exit status: 0 all submitted; 65 some files were unusable (recorded as failed) or not files; 66 nothing was
    recorded (only paths that are not files).
    """

    let storePath: String
    let paths: [RawPath]
    let options: SubmitOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard !arguments.positionals.isEmpty else { throw UsageError(message: "no files or folders given") }
        storePath = StoreOption.path(arguments)
        paths = RawArguments.paths(arguments.positionals)
        options = try SubmitOptionSpecs.parse(arguments)
    }

    func run() throws -> ExitStatus {
        try EngineCheck.languages(options.pageOptions.languages)
        let store = try Store(path: storePath)
        let report = try Submitter.submit(paths, options: options, store: store)
        return Submitter.exitStatus(report)
    }
}

/// Submission with a progress bar and a printed report, for `submit` and `run`.
enum Submitter {
    static func submit(_ paths: [RawPath], options: SubmitOptions, store: Store) throws -> SubmitReport {
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
        for (path, existing, _) in report.skipped.prefix(limit) {
            Console.error("ocrfarm: \(path): already submitted as '\(existing)'; skipped (use --force to submit again)")
        }
        if report.skipped.count > limit { Console.error("ocrfarm: … and \(report.skipped.count - limit) more already submitted") }
        var summary = "submitted \(report.added.count) document\(report.added.count == 1 ? "" : "s"), \(report.pages) page\(report.pages == 1 ? "" : "s")"
        var notes: [String] = []
        if !report.skipped.isEmpty { notes.append("\(report.skipped.count) skipped as already submitted") }
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
                   "At fast, do not read weak pages again (other image variants, the surest reading of each line kept)."),
        OptionSpec("--no-language-correction",
                   "Keep the characters as read: no word lists in the engine, no custom words, no Chinese punctuation (codes, serial numbers)."),
    ]

    static func apply(_ arguments: ParsedArguments, to options: PageOptions) throws(UsageError) -> PageOptions {
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
        return options
    }
}
