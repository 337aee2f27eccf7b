import FarmCore
import FarmRuntime
import FarmStore

/// `ocrfarm reread`: read a document's done pages again with other options.
struct RereadCommand: Command {
    static let name = "reread"
    static let abstract = "Read a document's done pages again with other options (language, level, stages); the old result stays until the new one lands."
    static let arguments = ""
    /// The reading options a reread may change; any other option of the document stays as submitted.
    static let readingOptions = ["--lang", "--mode", "--skip", "--raw", "--candidates", "--words", "--min-text-height", "--level",
                                 "--no-second-reading", "--image-dpi", "--pdf-type", "--no-language-correction", "--engine"]
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--document", value: "NAME", repeatable: true,
                   "The document to read again (its name, the path submitted, or the file name); may be repeated. Required."),
        OptionSpec("--dry-run", "Say which pages would be read again and with which options; change nothing."),
        SubmitOptionSpecs.all.first { $0.name == "--lang" }!,
    ] + CorrectionOptions.specs
    static let discussion = """
    The options given replace the document's (those not given stay as they were submitted), and its done pages
    are queued again; a coordinator serving the store reads them (or `ocrfarm run --store S`). Until a page's new
    result lands, its earlier result stays current: search finds it and export writes it (status counts the page
    as queued). The earlier result is kept in the page's history with the options it was read with. Pages not done
    (queued, being read, failed) are left as they are and are read with the new options when they are read
    (`ocrfarm requeue --failed` retries failed ones).

    Exit status: 0 queued (or would be, with --dry-run); 64 bad usage; 66 no store, or no document of that name;
    69 a language is not installed.
    """

    let storePath: String
    let names: [String]
    let dryRun: Bool
    let arguments: ParsedArguments
    /// The options given, by name: only these change the document's options.
    let given: Set<String>

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "reread takes no arguments; name documents with --document NAME")
        }
        storePath = StoreOption.path(arguments)
        names = arguments.values["--document"] ?? arguments.string("--document").map { [$0] } ?? []
        guard !names.isEmpty else { throw UsageError(message: "say which documents: --document NAME") }
        for name in names where name.isEmpty { throw UsageError(message: "--document needs a name, not an empty string") }
        dryRun = arguments.flag("--dry-run")
        given = Set(Self.readingOptions.filter { arguments.string($0) != nil || arguments.flag($0) })
        self.arguments = arguments
        // The values are checked now, so a mistyped one is a usage error before anything changes.
        _ = try Self.merged(PageOptions(), arguments: arguments, given: given)
    }

    /// `old` with the options given replaced.
    static func merged(_ old: PageOptions, arguments: ParsedArguments, given: Set<String>) throws(UsageError) -> PageOptions {
        let fresh = try CorrectionOptions.apply(arguments, to: old)
        var options = old
        if given.contains("--lang") {
            let languages = (arguments.string("--lang") ?? "").split(separator: "+").map(String.init)
            guard !languages.isEmpty, languages.allSatisfy({ !$0.isEmpty }) else {
                throw UsageError(message: "--lang takes languages joined by '+', e.g. chi_sim+eng")
            }
            options.languages = languages
        }
        if given.contains("--mode") { options.imageMode = fresh.imageMode }
        if given.contains("--skip") || given.contains("--raw") { options.skippedStages = fresh.skippedStages }
        if given.contains("--candidates") { options.candidates = fresh.candidates }
        if given.contains("--words") { options.words = fresh.words }
        if given.contains("--min-text-height") { options.minTextHeight = fresh.minTextHeight }
        if given.contains("--level") { options.level = fresh.level }
        if given.contains("--no-second-reading") { options.secondReading = fresh.secondReading }
        if given.contains("--image-dpi") { options.imageDPI = fresh.imageDPI }
        if given.contains("--pdf-type") { options.pdfType = fresh.pdfType }
        if given.contains("--no-language-correction") { options.languageCorrection = fresh.languageCorrection }
        if given.contains("--engine") { options.engine = fresh.engine }
        return options
    }

    func run() throws -> ExitStatus {
        let reader = try ReportDocuments.open(storePath)
        guard let documents = try ReportDocuments.selected(names, in: reader) else { return .usage }
        var plans: [(RereadPlan, PageOptions)] = []
        for document in documents {
            let old = try reader.options(of: document.id) ?? PageOptions()
            plans.append((try reader.rereadPlan(document), try Self.merged(old, arguments: arguments, given: given)))
        }
        let languages = Set(plans.flatMap { $0.1.languages })
        if given.contains("--lang") { try EngineCheck.languages(Array(languages).sorted()) }
        if given.contains("--engine") {
            for engine in Set(plans.map(\.1.engine)) { try EngineCheck.engine(engine, languages: []) }
        }
        let store = dryRun ? reader : try Store(path: storePath)
        var out = ""
        var total = 0
        for (plan, options) in plans {
            let queued = dryRun ? plan.done : try store.reread(plan.document.id, options: options)
            total += queued
            out += "  \(Printable.text(plan.document.name)): \(queued) done page\(queued == 1 ? "" : "s")"
            if plan.other > 0 { out += " (\(plan.other) not done left as they are)" }
            out += "; lang \(options.languages.joined(separator: "+")), level \(options.level.rawValue), engine \(options.engine.rawValue)"
            if !options.skippedStages.isEmpty { out += ", skip \(options.skippedStages.map(\.rawValue).joined(separator: ","))" }
            out += "\n"
        }
        let what = "\(total) page\(total == 1 ? "" : "s") of \(plans.count) document\(plans.count == 1 ? "" : "s")"
        if dryRun {
            Console.out("would read \(what) again:\n" + out + "dry run: nothing was changed\n")
        } else {
            Console.out("queued \(what) to be read again; their results stay until the new ones land:\n" + out)
        }
        return .success
    }
}
