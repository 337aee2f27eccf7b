import FarmCore
import FarmExport
import FarmIIIF
import FarmRuntime
import FarmStore

/// `ocrfarm export`: the store's results as files.
struct ExportCommand: Command {
    static let name = "export"
    static let abstract = "Write each document as a searchable PDF and its pages as text, hOCR, ALTO, PAGE XML and JSON."
    static let arguments = ""
    static let options: [OptionSpec] = [
        OptionSpec("--out", value: "DIR", "The folder to write into (made if missing). Required unless --iiif is given."),
        OptionSpec("--iiif", value: "DIR",
                   "Also (or instead of --out) write the documents as static IIIF files into DIR: Presentation 3.0 manifests, "
                   + "the text as annotations, page images at Image API level 0 (docs/formats.md)."),
        OptionSpec("--iiif-base", value: "URL",
                   "The URL DIR of --iiif is published at (http://host/iiif); every IIIF id starts with it. Required with --iiif."),
        StoreOption.spec,
        OptionSpec("--document", value: "NAME", repeatable: true,
                   "Only this document (its name as submitted, or the file name); may be repeated. Default: all."),
        OptionSpec("--format", value: "LIST",
                   "Formats to write: \(OutputFormat.exported.map(\.exportName).joined(separator: ", ")) (comma-separated; default: all)."),
        OptionSpec("--pdf-type", value: "TYPE",
                   "pdfa-2b (PDF/A-2B documents: XMP metadata, sRGB OutputIntent, embedded fonts; default) or pdf (plain)."),
        OptionSpec("--complete-only", "Skip documents that have pages not done yet, instead of exporting their done pages."),
        OptionSpec("--layout", value: "tree|flat",
                   "tree: mirror the submitted folders (box17/folder3.pdf; default); flat: every document in DIR (box17_folder3.pdf)."),
        OptionSpec("--quality-report", "Also write DIR/quality.csv: per document its pages, done, failed, mean quality, worst page and worst region, weakest first."),
        OptionSpec("--text-per", value: "page|document",
                   "page: a text file per page (default); document: also DIR/NAME.txt, the document's text, pages separated by form feeds."),
    ]
    static let discussion = """
    Layout: DIR/NAME.pdf holds the document's done pages in page order (one searchable PDF, merged with qpdf);
    DIR/NAME/0001.txt, .hocr, .alto.xml, .page.xml and .json hold each done page (numbered by its page in the
    document, padded to 4 digits or more), each a complete one-page document. NAME is the document name made
    safe: its folders are kept as folders (box17/folder3/p1.png gives box17/folder3/p1.pdf; with --layout flat they
    are joined with _), empty, . and .. parts are dropped, control and Windows-reserved characters become _, the
    submitted file's extension is dropped, long names are shortened around a …; a name that an earlier document
    (lower id) already has, ignoring case, gets ~ID after it, so a document's name is the same in every export.

    A page that failed for good (timeout, memory, damaged) keeps its place in the document's PDF, so a volume
    keeps its page count: as its image without a text layer when its source still reads and decodes (checked
    against the size and SHA-256 recorded at submit, as the coordinator checks it), or else as a placeholder page
    that says which page it is, how it failed and why its image is missing; a warning lists these degraded pages
    (`ocrfarm requeue --failed` retries them). Pages not done yet (queued, leased) are left out with a warning
    naming the document and its counts; --complete-only skips every document with a page not done. A done page
    without a stored rendering (submitted with --outputs leaving it out) is left out of that format with a
    warning; text is always there. A document whose stored PDF pages qpdf cannot merge gets no PDF, with a
    warning. Files are written under a hidden staging folder and renamed into place, so an interrupted export
    never leaves a half-written file under its name; existing files of the same names are replaced, other files
    are left alone. Warnings go to standard error, the summary to standard
    output.

    --quality-report writes DIR/quality.csv (RFC 4180, UTF-8, a header line): document, pages, done, failed,
    mean_quality (the mean figure of its done pages, 0…1, as in `review`), worst_page and worst_page_quality,
    worst_region_quality and worst_region_page (the lowest figure of a text block on any of its pages). Documents
    are listed weakest first (lowest mean); those without a measured page come last with empty figures.

    With --iiif DIR --iiif-base URL the same documents are written as static IIIF for a plain web server that
    publishes DIR at URL: DIR/ID/manifest.json per document (a canvas per page with an image; the text line by
    line as supplementing annotations in DIR/ID/annotations/PAGE.json), and DIR/image/PAGE/info.json with the
    page image as JPEG at level 0 (the whole image and halved sizes down to 512 pixels; no tiles, no search: use
    `ocrfarm serve` for Image API level 1 and Content Search). PDF pages are rasterized at 300 dpi.

    Exit status: 0 everything chosen was exported; 65 exported with warnings (pages or renderings left out,
    documents skipped); 10 exported, but a PDF could not be made PDF/A-2B (written as a plain PDF, with a warning
    naming the page and why); 64 bad usage; 66 no store, or no document of that name; 73 the folder cannot be written;
    74 the store cannot be read.
    """

    let storePath: String
    let outPath: String?
    let options: ExportOptions
    let qualityReport: Bool
    /// The static IIIF tree's folder and base URL (`--iiif`, `--iiif-base`).
    let iiif: (folder: String, base: String)?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "export takes no arguments, not '\(arguments.positionals[0])' (give the folder with --out)")
        }
        let out = arguments.string("--out")
        if let folder = arguments.string("--iiif") {
            guard !folder.isEmpty else { throw UsageError(message: "--iiif needs a folder") }
            guard let base = arguments.string("--iiif-base"), base.hasPrefix("http://") || base.hasPrefix("https://") else {
                throw UsageError(message: "--iiif needs --iiif-base URL (http:// or https://): the URL its folder is published at")
            }
            iiif = (folder, base)
        } else {
            if arguments.string("--iiif-base") != nil { throw UsageError(message: "--iiif-base goes with --iiif DIR") }
            iiif = nil
        }
        if out?.isEmpty ?? false { throw UsageError(message: "--out needs a folder") }
        guard out != nil || iiif != nil else { throw UsageError(message: "--out DIR is required (or --iiif DIR)") }
        outPath = out
        storePath = StoreOption.path(arguments)
        var formats = OutputFormat.exported
        if let list = arguments.string("--format") {
            let names = list.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmed }
            formats = []
            for name in names {
                guard let format = OutputFormat(exportName: name) else {
                    throw UsageError(message: "--format takes \(OutputFormat.exported.map(\.exportName).joined(separator: ", ")), not '\(name)'")
                }
                if !formats.contains(format) { formats.append(format) }
            }
        }
        // Document names are taken whole: a name may contain commas.
        let documents = arguments.values["--document"] ?? arguments.string("--document").map { [$0] } ?? []
        for name in documents where name.isEmpty { throw UsageError(message: "--document needs a name, not an empty string") }
        let layout = try arguments.choice("--layout", ["tree", "flat"]) ?? "tree"
        let textPer = try arguments.choice("--text-per", ["page", "document"]) ?? "page"
        if textPer == "document" && !formats.contains(.text) {
            throw UsageError(message: "--text-per document writes text: leave text in --format")
        }
        var options = ExportOptions(formats: formats, documents: documents, completeOnly: arguments.flag("--complete-only"),
                                    tree: layout == "tree", documentText: textPer == "document")
        options.pdfType = try arguments.choice("--pdf-type", PDFType.allCases.map(\.rawValue)).flatMap(PDFType.init(rawValue:)) ?? .pdfa2b
        self.options = options
        qualityReport = arguments.flag("--quality-report")
        if qualityReport && out == nil { throw UsageError(message: "--quality-report writes DIR/quality.csv: give the folder with --out DIR") }
    }

    func run() throws -> ExitStatus {
        let store = try ReportDocuments.open(storePath)
        var iiifWarnings = 0
        if let iiif {
            iiifWarnings = try exportIIIF(store, into: iiif.folder, base: iiif.base)
        }
        guard let outPath else { return iiifWarnings > 0 ? .dataError : .success }
        let bar = ProgressLine(enabled: Console.errorIsTerminal)
        let summary: ExportSummary
        do {
            summary = try StoreExport(store: store, options: options).run(into: outPath, warn: { message in
                bar.clear()
                // Document names come from file names: their controls and bidi overrides are shown escaped.
                Console.error("ocrfarm export: warning: " + Printable.text(message))
            }, progress: { done, total in
                bar.show("exporting: \(done)/\(total) documents")
            })
        } catch {
            bar.clear()
            switch error.kind {
            case .unknownDocument: throw CommandFailure(.noInput, error.message)
            case .output: throw CommandFailure(.cannotCreate, error.message)
            case .store: throw CommandFailure(.ioError, error.message)
            }
        }
        bar.clear()
        if qualityReport { try writeQualityReport(store, into: outPath) }
        func plural(_ count: Int, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        var line = "exported \(plural(summary.documents, "document")), \(plural(summary.pages, "page")), "
        line += "\(plural(summary.files, "file")) into \(outPath)"
        if summary.skipped > 0 { line += "; \(plural(summary.skipped, "document")) skipped" }
        if summary.degraded > 0 {
            line += "; \(plural(summary.degraded, "degraded page")) (failed for good) in the PDFs without text: "
            line += "\(summary.degradedImages) as their image, \(summary.placeholders) as a placeholder"
        }
        if qualityReport { line += "; quality report " + FileSystem.joined(outPath, "quality.csv") }
        line += "; \(plural(summary.warnings, "warning"))"
        Console.out(line + "\n")
        // Only PDFs that could not be PDF/A-2B: a status of its own, as `ocr` gives.
        if summary.notArchival > 0 && summary.warnings == summary.notArchival && iiifWarnings == 0 { return .notArchival }
        return summary.warnings + iiifWarnings > 0 ? .dataError : .success
    }

    /// The static IIIF tree of the chosen documents; returns how many warnings it gave.
    func exportIIIF(_ store: Store, into folder: String, base: String) throws -> Int {
        var chosen: [DocumentRecord]?
        if !options.documents.isEmpty {
            chosen = []
            for name in options.documents {
                let found = try store.read { try store.documents(named: name) }
                guard !found.isEmpty else { throw CommandFailure(.noInput, "no document named '\(Printable.text(name))' in \(storePath)") }
                chosen! += found
            }
        }
        let summary: StaticIIIF.Summary
        do {
            summary = try store.read {
                try StaticIIIF(store: store, base: base).write(chosen, into: folder) { message in
                    Console.error("ocrfarm export: warning: " + Printable.text(message))
                }
            }
        } catch let error as StaticIIIF.Failure {
            throw CommandFailure(.cannotCreate, error.message)
        } catch let error as StoreError {
            throw CommandFailure(.ioError, error.message)
        }
        Console.out("IIIF: \(summary.documents) manifests, \(summary.canvases) canvases, \(summary.files) files into \(folder) "
                    + "(level 0 images; base \(base)); \(summary.warnings) warnings\n")
        return summary.warnings
    }

    /// DIR/quality.csv, of the documents exported (discussion).
    func writeQualityReport(_ store: Store, into outPath: String) throws {
        var ids: [DocumentID]?
        if !options.documents.isEmpty { ids = try options.documents.flatMap { try store.documents(named: $0).map(\.id) } }
        var csv = "document,pages,done,failed,mean_quality,worst_page,worst_page_quality,worst_region_quality,worst_region_page\r\n"
        for line in try store.qualityLines(documents: ids) {
            func figure(_ value: Double?) -> String { value.map { Format.fixed($0, 3) } ?? "" }
            func number(_ value: Int?) -> String { value.map { String($0) } ?? "" }
            var fields: [String] = [Self.csvField(line.document.name), String(line.pages), String(line.done), String(line.failed)]
            fields += [figure(line.mean), number(line.worstPage), figure(line.worstPageQuality)]
            fields += [figure(line.worstRegion), number(line.worstRegionPage)]
            csv += fields.joined(separator: ",") + "\r\n"
        }
        do throws(FileError) {
            try FileSystem.makeDirectory(outPath)
            try FileSystem.write(csv, to: FileSystem.joined(outPath, "quality.csv"))
        } catch {
            throw CommandFailure(.cannotCreate, "cannot write \(FileSystem.joined(outPath, "quality.csv")): \(error.reason)")
        }
    }

    /// A CSV field (RFC 4180): quoted, its quotes doubled, when it holds a comma, a quote or a line break.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.map { $0 == "\"" ? "\"\"" : String($0) }.joined() + "\""
    }
}
