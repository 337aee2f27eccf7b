import FarmCore
import FarmRender
import FarmRuntime
import FarmStore
import QPDF

/// What to export.
public struct ExportOptions: Sendable {
    /// The formats to write, in this order: one searchable PDF per document, one file per page for the others
    /// (`OutputFormat.fileExtension`).
    public var formats: [OutputFormat]
    /// Names of the documents to export, as submitted or their file names (`Store.documents(named:)`; a name may
    /// belong to several documents); empty: every document.
    public var documents: [String]
    /// Leave out documents with pages not done, instead of exporting their done pages.
    public var completeOnly: Bool
    /// Mirror the submitted tree (`box17/folder3.pdf`); false: every document directly in the export folder, its
    /// name's folders joined with `_` (`box17_folder3.pdf`).
    public var tree: Bool
    /// Also write one text file per document (`NAME.txt`: its done pages' text in page order, pages separated by a
    /// form feed, as pdftotext does).
    public var documentText: Bool
    /// What the documents' PDFs are (`--pdf-type`): their metadata and degraded pages (the stored pages were made
    /// as their submit options said).
    public var pdfType: PDFType = .pdfa2b

    public init(formats: [OutputFormat] = OutputFormat.exported, documents: [String] = [], completeOnly: Bool = false,
                tree: Bool = true, documentText: Bool = false) {
        self.formats = formats
        self.documents = documents
        self.completeOnly = completeOnly
        self.tree = tree
        self.documentText = documentText
    }
}

/// What an export wrote.
public struct ExportSummary: Sendable, Equatable {
    /// Documents with at least one file written.
    public var documents = 0
    /// Documents chosen but not written: not complete with `completeOnly`, or without a done page.
    public var skipped = 0
    /// Done pages written.
    public var pages = 0
    /// Files written.
    public var files = 0
    /// Warnings given.
    public var warnings = 0
    /// Pages that failed for good, put into their document's PDF as their image without text (`degradedImages`) or
    /// as a placeholder page saying why (`placeholders`).
    public var degradedImages = 0
    public var placeholders = 0
    public var degraded: Int { degradedImages + placeholders }
    /// Documents whose PDF was to be PDF/A-2B and could not be made one (written as plain PDFs, each with a
    /// warning naming the page and why; among `warnings`).
    public var notArchival = 0

    public init() {}
}

/// Why an export stopped.
public struct ExportError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// A document name given to export matches no document.
        case unknownDocument
        /// The output folder or a file in it cannot be written.
        case output
        /// The store cannot be read.
        case store
    }

    public let kind: Kind
    public let message: String

    public var description: String { message }
}

/// Writes the results of a store into a folder.
///
/// Layout, for a document whose safe name (`ExportNames`) is `NAME`:
/// - `NAME.pdf`: the searchable PDF of the document's done pages in page order, merged with qpdf from the one-page
///   PDFs the workers stored;
/// - `NAME/0001.txt`, `.hocr`, `.alto.xml`, `.page.xml`, `.json`: one file per done page, numbered by the page's
///   number in the document (zero-padded to at least four digits, more when the document has more pages), each a
///   complete one-page document: the stored text, and the stored renderings.
///
/// Documents are walked in id order and pages in page order, in batches, one page's renderings in memory at a
/// time. A page that failed for good keeps its place in the document's PDF as a degraded page (`DegradedPage`: its
/// image without text, or a placeholder page saying why), listed in a warning; pages still queued or leased are
/// left out with a warning (or the whole document, with `completeOnly`); a done page
/// without a stored rendering (submitted with `--outputs` leaving it out) is left out of that format with a
/// warning; hOCR, ALTO, PAGE and JSON not stored are rendered from the page's model (`Store.model(of:)`) as the
/// worker would have rendered them; a document whose stored PDF pages qpdf cannot merge gets no PDF, with a warning. Warnings go to `warn` as they happen. Reads through `store`; confined to its thread.
public final class StoreExport {
    private let store: Store
    private let options: ExportOptions
    /// Documents and pages read per query.
    private let batchSize = 256
    /// Renderings made from the pages' models ahead of writing them (render on demand), by page, with the
    /// document each belongs to: `export` takes its pages' as it writes them, and what a document leaves is dropped
    /// after it. At most `renderedAhead` pages' at a time beyond the page being written.
    private var ahead: [PageID: (document: DocumentID, renderings: [OutputFormat: [UInt8]])] = [:]

    public init(store: Store, options: ExportOptions) {
        self.store = store
        self.options = options
    }

    /// Exports into the folder at `path` (made if missing). `progress` is called after each document with the
    /// documents done and the documents to do.
    public func run(into path: String, warn: (String) -> Void, progress: (Int, Int) -> Void = { _, _ in })
        throws(ExportError) -> ExportSummary
    {
        let chosen = try chosenDocuments()
        let folder: ExportFolder
        do {
            folder = try ExportFolder(path: path)
        } catch {
            throw ExportError(kind: .output, message: "cannot write into \(path): \(error.reason)")
        }
        var summary = ExportSummary()
        do {
            let stored = try store.read { try store.documentCount() }
            let total = chosen?.count ?? stored
            let last = chosen?.max()
            var names = ExportNames(expected: stored, tree: options.tree)
            var after: DocumentID?
            var done = 0
            // The last document whose first pages were rendered ahead (`renderAhead(firstPagesOf:)`).
            var renderedThrough: DocumentID?
            // The first pages of the documents after those, being rendered on other threads while these are written,
            // through the last document looked at (its threads are joined when dropped).
            var next: (started: Started<[OutputFormat: [UInt8]]>, jobs: [RenderJob], through: DocumentID)?
            walk: while true {
                let batch = try store.read { try store.documents(after: after, limit: batchSize) }
                guard !batch.isEmpty else { break }
                for (index, document) in batch.enumerated() {
                    if let last, document.id > last { break walk }
                    // Every document is named, exported or not, so names do not depend on what is chosen.
                    let name = names.name(for: document.name, id: document.id)
                    guard chosen?.contains(document.id) ?? true else { continue }
                    // Small documents' pages are rendered ahead together, across documents, so that every core
                    // renders even when each document has one page.
                    if ahead.isEmpty && renderedThrough.map({ document.id > $0 }) ?? true {
                        if let started = next {
                            next = nil
                            keep(started.started.join(), of: started.jobs)
                            renderedThrough = started.through
                        }
                        if renderedThrough.map({ document.id > $0 }) ?? true {
                            renderedThrough = try renderAhead(firstPagesOf: batch[index...].lazy.filter { chosen?.contains($0.id) ?? true })
                        }
                        // The documents after these are rendered while these are written.
                        if let through = renderedThrough {
                            let rest = batch[index...].lazy.filter { $0.id > through && (chosen?.contains($0.id) ?? true) }
                            let (jobs, last) = try renderJobs(firstPagesOf: rest)
                            if let last { next = (Parallel.start(jobs, Self.render), jobs, last) }
                        }
                    }
                    try export(document, as: name, into: folder, summary: &summary, warn: warn)
                    ahead = ahead.filter { $0.value.document != document.id }
                    done += 1
                    progress(done, total)
                }
                after = batch.last?.id
            }
        } catch let error as ExportError {
            throw error
        } catch let error as StoreError {
            throw ExportError(kind: .store, message: error.message)
        } catch let error as FileError {
            throw ExportError(kind: .output, message: "cannot write \(error.path): \(error.reason)")
        } catch let error as DocumentPDFError {
            throw ExportError(kind: .output, message: error.message)
        } catch {
            throw ExportError(kind: .store, message: "\(error)")
        }
        return summary
    }

    /// The ids of the documents named in the options; nil for every document.
    private func chosenDocuments() throws(ExportError) -> Set<DocumentID>? {
        guard !options.documents.isEmpty else { return nil }
        var chosen: Set<DocumentID> = []
        do {
            for name in options.documents {
                let documents = try store.read { try store.documents(named: name) }
                guard documents.isEmpty else {
                    chosen.formUnion(documents.map(\.id))
                    continue
                }
                let similar = try store.read { try store.documentNames(containing: name) }
                var message = "no document named '\(RawPath(name))' in \(store.path)"
                if !similar.isEmpty { message += "; names containing it: " + similar.map { "'\(RawPath($0))'" }.joined(separator: ", ") }
                throw ExportError(kind: .unknownDocument, message: message)
            }
        } catch let error as ExportError {
            throw error
        } catch let error as StoreError {
            throw ExportError(kind: .store, message: error.message)
        } catch {
            throw ExportError(kind: .store, message: "\(error)")
        }
        return chosen
    }

    private func export(_ document: DocumentRecord, as name: String, into folder: ExportFolder, summary: inout ExportSummary,
                        warn report: (String) -> Void) throws
    {
        func warn(_ message: String) {
            summary.warnings += 1
            report(message)
        }
        // Pages being read again (`reread`) keep their earlier result until the new one lands: it is exported.
        let rereading = try store.read { try store.pagesWithEarlierResult(of: document.id) }
        guard try isExported(document, rereading: rereading, warn: warn) else {
            summary.skipped += 1
            return
        }
        var work = DocumentWork(document: document, name: name, scratch: folder.stagingPath,
                                pdf: options.formats.contains(.pdf))
        try exportPages(of: &work, rereading: rereading, into: folder)
        if options.documentText, work.textPages > 0 {
            try folder.write(work.documentText, as: name + ".txt")
            work.files += 1
        }
        if let pdf = work.pdf, pdf.pageCount > 0 {
            let published = try publishPDF(pdf, of: work, into: folder, warn: warn)
            if published.written { work.files += 1 }
            summary.notArchival += published.notArchival
        }
        if let message = Self.degradedWarning(work.degraded, shown: work.shown) { warn(message) }
        for message in try missingWarnings(work) { warn(message) }
        summary.files += work.files
        summary.pages += work.pages
        summary.degradedImages += work.degradedImages
        summary.placeholders += work.placeholders
        if work.files > 0 {
            summary.documents += 1
        } else {
            summary.skipped += 1
        }
    }

    /// Whether `document` is exported: it has done pages (or failed ones, for the PDF), and is complete when
    /// `completeOnly` asks for that; a document with pages not done is said in a warning.
    private func isExported(_ document: DocumentRecord, rereading: Set<PageID>, warn: (String) -> Void) throws -> Bool {
        let shown = "'\(RawPath(document.name))'"
        let counts = try store.read { try store.counts(of: [document.id]) }
        let total = counts.values.reduce(0, +)
        let doneCount = (counts[.done] ?? 0) + rereading.count
        // Failed pages have a place in the PDF (as degraded pages), not in the page files.
        let failedCount = options.formats.contains(.pdf) ? counts[.failed] ?? 0 : 0
        guard doneCount < total || total == 0 else { return true }
        let state = Self.describe(counts, total: total)
        if doneCount + failedCount == 0 {
            warn("document \(shown): \(state); nothing to export")
            return false
        }
        if options.completeOnly {
            warn("document \(shown) skipped (--complete-only): \(state)")
            return false
        }
        if doneCount + failedCount < total {
            warn("document \(shown) is not complete: \(state); exported the done pages only"
                 + (failedCount > 0 ? " (and the failed ones as degraded PDF pages)" : ""))
        }
        return true
    }

    /// One document's export under way: where its files go and what its pages gave so far.
    private struct DocumentWork {
        let document: DocumentRecord
        let name: String
        /// The document's name as warnings show it.
        let shown: String
        /// Page numbers in file names are zero-padded to this many digits.
        let digits: Int
        let pdf: DocumentPDF?
        /// The source PDFs split into pages, for degraded pages.
        let pdfPages: SourcePDFPages
        var subfolder: ExportFolder.Subfolder?
        var subfolderPath: String?
        /// Formats done pages have not stored, with the first few pages.
        var missing: [OutputFormat: (count: Int, pages: [Int])] = [:]
        var degraded: [(number: Int, code: String, kind: DegradedPage.Kind)] = []
        /// The document's text, page by page (`documentText`); a page without text keeps its place, empty.
        var documentText: [UInt8] = []
        var textPages = 0
        /// The PDF the document came in as, while every page so far is its page of the same number: the document's
        /// PDF is then that file with the text added (`DocumentPDF.overlay`), not a merge of the stored pages.
        var wholeSource: SourceRef?
        var oneSource: Bool
        var files = 0, pages = 0, degradedImages = 0, placeholders = 0

        init(document: DocumentRecord, name: String, scratch: String, pdf: Bool) {
            self.document = document
            self.name = name
            shown = "'\(RawPath(document.name))'"
            digits = max(4, String(max(document.pageCount, 1)).count)
            self.pdf = pdf ? DocumentPDF(directory: scratch, prefix: "d\(document.id)") : nil
            pdfPages = SourcePDFPages(scratch: scratch, name: "d\(document.id)-split")
            oneSource = pdf
        }

        /// Follows whether every page so far is the page of the same number of one source PDF.
        mutating func follow(_ source: SourceRef?, of page: PageRecord) {
            guard oneSource else { return }
            if let source, source.kind == .pdf, source.index == page.number - 1,
               wholeSource.map({ $0.path == source.path && $0.hash == source.hash && $0.size == source.size }) ?? true
            {
                wholeSource = source
            } else {
                oneSource = false
            }
        }
    }

    /// The document's pages in page order, in batches: the renderings made from the pages' models (render on
    /// demand) a few pages ahead, on every core (the first ones may have been, with the documents before: `run`).
    private func exportPages(of work: inout DocumentWork, rereading: Set<PageID>, into folder: ExportFolder) throws {
        var after = 0
        while true {
            let pages = try store.read { try store.pages(of: work.document.id, after: after, limit: batchSize) }
            guard let lastPage = pages.last else { break }
            after = lastPage.number
            var renderedUpTo = -1
            for (index, page) in pages.enumerated() {
                let hasResult = page.state == .done || rereading.contains(page.id)
                let source = work.pdf == nil ? nil : try store.read { try store.source(of: page.id) }
                work.follow(source, of: page)
                if hasResult && ahead[page.id] == nil && index > renderedUpTo {
                    let next = pages[index...].prefix(Self.renderedAhead)
                    try renderAhead(next.filter { ($0.state == .done || rereading.contains($0.id)) && ahead[$0.id] == nil })
                    renderedUpTo = index + next.count - 1
                }
                try exportPage(page, source: source, hasResult: hasResult, of: &work, into: folder)
            }
        }
    }

    /// One page: a failed one as a degraded PDF page, a done one (or one being read again) in every format, and
    /// its text in the document's text.
    private func exportPage(_ page: PageRecord, source: SourceRef?, hasResult: Bool, of work: inout DocumentWork,
                            into folder: ExportFolder) throws {
        if page.state == .failed, let pdf = work.pdf {
            let stand = DegradedPage.make(for: page, source: source, documentName: work.document.name, pdfPages: work.pdfPages,
                                          type: options.pdfType)
            try pdf.append(stand.pdf)
            work.degraded.append((page.number, page.failureCode ?? "failed", stand.kind))
            if case .image = stand.kind { work.degradedImages += 1 } else { work.placeholders += 1 }
            return
        }
        if options.documentText, hasResult || page.state == .failed {
            if work.textPages > 0 { work.documentText.append(0x0C) }
            if hasResult, let text = try store.read({ try store.text(of: page.id) }) {
                work.documentText += Array(text.utf8)
                if work.documentText.last != 0x0A { work.documentText.append(0x0A) }
            }
            work.textPages += 1
        }
        guard hasResult else { return }
        if try writeFormats(of: page, source: source, work: &work, into: folder) { work.pages += 1 }
    }

    /// Writes the page in every format of the options (its PDF into the document's); false when it had none.
    /// Formats not stored were rendered from the page's model (`renderAhead`), and its text read with it; a page
    /// stored with a rendering (frozen at OCR time, or an older store) exports that.
    private func writeFormats(of page: PageRecord, source: SourceRef?, work: inout DocumentWork,
                              into folder: ExportFolder) throws -> Bool {
        var written = false
        let rendered = ahead.removeValue(forKey: page.id)?.renderings ?? [:]
        for format in options.formats {
            // One page's renderings at a time: each read, written and let go. A format rendered from the
            // model is one the page has not stored (`renderJobs`): not looked for again.
            let bytes = try PageRenderings.rendering(format, rendered: rendered) {
                try store.read { () throws -> [UInt8]? in
                    format == .text ? try store.text(of: page.id).map { Array($0.utf8) } : try store.artifact(format.rawValue, of: page.id)
                }
            }
            guard let bytes else {
                work.missing[format, default: (0, [])].count += 1
                if work.missing[format]!.pages.count < 10 { work.missing[format]!.pages.append(page.number) }
                continue
            }
            written = true
            if format == .pdf {
                try work.pdf?.append(bytes, sourcePage: source?.kind == .pdf ? source?.index : nil)
                continue
            }
            if work.subfolder == nil {
                work.subfolder = try folder.subfolder(work.name)
                work.subfolderPath = FileSystem.canonicalPath(folder.path + "/" + work.name)
            }
            // The XML names the page image as the worker knew it ("scan.tif page 3"): here it is the
            // page's file, by a path that resolves from the folder the XML is written into.
            let pointed = page.source.string.map { source in
                PageArtifacts.pointed(bytes, format, at: Self.relativePath(to: source, from: work.subfolderPath))
            } ?? bytes
            try folder.write(pointed, as: Self.padded(page.number, work.digits) + "." + format.fileExtension, in: work.subfolder)
            work.files += 1
        }
        return written
    }

    /// Publishes the document's PDF: the source PDF with the text added when every page is its, else merged from
    /// the stored pages; made PDF/A-2B when a page is a PDF's own (`PDFArchive`), or said loudly why not. False
    /// when no PDF was written: a stored page qpdf cannot read costs this document its PDF, not the export.
    /// Counts the documents (0 or 1) that were to be PDF/A-2B and are not.
    private func publishPDF(_ pdf: DocumentPDF, of work: DocumentWork, into folder: ExportFolder,
                            warn: (String) -> Void) throws -> (written: Bool, notArchival: Int) {
        let shown = work.shown
        let staged = folder.stagedFile(".pdf")
        var notArchival = 0
        func archived(_ outcome: PDFArchiveOutcome?) {
            guard let outcome, !outcome.isArchival else { return }
            notArchival += 1
            let problems = outcome.remaining.prefix(5).map(\.description).joined(separator: "; ")
            warn("document \(shown): \(work.name).pdf is not PDF/A-2B (written as a plain PDF): \(problems)"
                 + (outcome.remaining.count > 5 ? "; and \(outcome.remaining.count - 5) more" : ""))
        }
        do {
            let published = try pdf.publish(into: staged.path, source: { () throws -> DocumentPDF.Source? in
                guard work.oneSource, let source = work.wholeSource else { return nil }
                return try overlaid(source, of: work.document)
            }, refused: { reason in
                warn("document \(shown): \(reason); its PDF is merged from the stored pages instead, without the source's "
                     + "outline and document metadata")
            }, metadata: {
                let fields = try store.read { try store.metadata(of: work.document.id) }
                return DocumentPDF.Metadata(title: work.document.name, type: options.pdfType, document: fields)
            })
            switch published {
            case .overlaid(let outcome), .merged(let outcome): archived(outcome)
            }
            try folder.publish(staged.name, as: work.name + ".pdf")
            return (true, notArchival)
        } catch let error as DocumentPDFError {
            warn("document \(shown): \(error.message); no PDF written")
            return (false, notArchival)
        }
    }

    /// Every degraded page named (a volume's reader needs to know which pages have no text), a few with why
    /// their image is missing too; nil when there is none.
    private static func degradedWarning(_ degraded: [(number: Int, code: String, kind: DegradedPage.Kind)], shown: String) -> String? {
        guard !degraded.isEmpty else { return nil }
        var list = degraded.map { page in
            let how = if case .image = page.kind { "image only" } else { "placeholder" }
            return "\(page.number) (\(page.code), \(how))"
        }.joined(separator: ", ")
        let reasons = degraded.compactMap { page -> String? in
            if case .placeholder(let reason) = page.kind { return "page \(page.number): \(reason)" }
            return nil
        }
        if !reasons.isEmpty { list += "; no image for " + reasons.prefix(3).joined(separator: "; ") }
        if reasons.count > 3 { list += "; and \(reasons.count - 3) more" }
        return "document \(shown): \(degraded.count) page\(degraded.count == 1 ? "" : "s") failed for good, in the PDF "
            + "without text: page\(degraded.count == 1 ? "" : "s") \(list) (ocrfarm requeue --failed retries them)"
    }

    /// One warning per format that done pages have not stored (submitted with `--outputs` leaving it out).
    private func missingWarnings(_ work: DocumentWork) throws -> [String] {
        guard !work.missing.isEmpty else { return [] }
        let outputs = try store.read { try store.options(of: work.document.id) }?.outputs
        let submitted = outputs.map { " (submitted with --outputs \($0.isEmpty ? "none" : $0.map(\.rawValue).joined(separator: ",")))" } ?? ""
        return options.formats.compactMap { format in
            guard let gap = work.missing[format] else { return nil }
            var list = gap.pages.map(String.init).joined(separator: ", ")
            if gap.count > gap.pages.count { list += " and \(gap.count - gap.pages.count) more" }
            return "document \(work.shown): no stored \(format.rawValue) for page\(gap.count == 1 ? "" : "s") \(list)\(submitted); left out of the \(format.exportName) export"
        }
    }

    /// The PDF `document` came in as, `source`, to lay its pages' text over (`DocumentPDF.publish`), or why not: the
    /// file changed or vanished since it was submitted (read and checked as for a degraded page), qpdf cannot read
    /// it, or its page count is not the document's.
    private func overlaid(_ source: SourceRef, of document: DocumentRecord) throws -> DocumentPDF.Source {
        let bytes: [UInt8]
        switch DegradedPage.checkedSource(source) {
        case .success(let read): bytes = read
        case .failure(let reason): throw DocumentPDFError(message: reason.message)
        }
        let name = "\(source.path)"
        let count: Int
        do throws(QPDFError) {
            count = try QPDF.info(bytes: bytes, name: name).pageCount
        } catch {
            throw DocumentPDFError(message: "cannot read \(name): \(error.message)")
        }
        guard count == document.pageCount else {
            throw DocumentPDFError(message: "\(name) has \(count) pages, the document \(document.pageCount)")
        }
        let redo = try store.read { try store.options(of: document.id) }?.pdfText == .redo
        return DocumentPDF.Source(bytes: bytes, name: name, replacingEarlier: redo, type: options.pdfType, title: document.name,
                                  document: try store.read { try store.metadata(of: document.id) })
    }

    /// Pages rendered from their models at once (`renderAhead`): enough to keep every core busy, few enough that
    /// their renderings (a few hundred KB a page) stay small in memory.
    static let renderedAhead = 16

    /// A page to render from its model (render on demand): the formats it has not stored (`PageRenderings`), its
    /// text and its packed model, read from the store (confined to this thread) to be inflated, parsed and rendered
    /// on any.
    typealias RenderJob = (page: PageID, document: DocumentID, renderings: PageRenderings, text: String, packed: [UInt8])

    /// Whether a format of the options is rendered from the models of pages that have not stored it.
    private var rendersFromModels: Bool { !PageRenderings(options.formats, stored: []).fromModel.isEmpty }

    /// The formats of `options` that `pages` have not stored, rendered from their models (render on demand), into
    /// `ahead`; a page without a model (an older store) gets none, and is reported missing as before. The models
    /// are read here and inflated, parsed and rendered on every core.
    private func renderAhead(_ pages: some Collection<PageRecord>) throws {
        let jobs = try renderJobs(pages)
        keep(Parallel.map(jobs, Self.render), of: jobs)
    }

    /// The jobs of `pages` (`renderAhead`).
    private func renderJobs(_ pages: some Collection<PageRecord>) throws -> [RenderJob] {
        guard rendersFromModels, !pages.isEmpty else { return [] }
        var jobs: [RenderJob] = []
        try store.read {
            for page in pages {
                let renderings = PageRenderings(options.formats, stored: try store.artifactNames(of: page.id))
                guard !renderings.fromModel.isEmpty, let model = try store.packedModel(of: page.id) else { continue }
                jobs.append((page.id, page.document, renderings, model.text, model.packed))
            }
        }
        return jobs
    }

    @Sendable
    private static func render(_ job: RenderJob) -> [OutputFormat: [UInt8]] {
        guard let model = Store.model(text: job.text, packed: job.packed) else { return [:] }
        return job.renderings.rendered(from: model)
    }

    /// The renderings of `jobs`, kept in `ahead` until their pages are written, with the page's text when it is
    /// exported (read with the model: not asked for again).
    private func keep(_ rendered: [[OutputFormat: [UInt8]]], of jobs: [RenderJob]) {
        let text = options.formats.contains(.text)
        for (job, renderings) in zip(jobs, rendered) {
            var renderings = renderings
            if text { renderings[.text] = Array(job.text.utf8) }
            ahead[job.page] = (job.document, renderings)
        }
    }

    /// The first pages of `documents`, up to `renderedAhead` in all, that may have a result (not failed for good),
    /// rendered ahead (`renderAhead(_:)`); returns the last document looked at.
    private func renderAhead(firstPagesOf documents: some Sequence<DocumentRecord>) throws -> DocumentID? {
        let (jobs, last) = try renderJobs(firstPagesOf: documents)
        keep(Parallel.map(jobs, Self.render), of: jobs)
        return last
    }

    /// The jobs of the first pages of `documents` (`renderAhead(firstPagesOf:)`), and the last document looked at;
    /// nil when no format is rendered on demand.
    private func renderJobs(firstPagesOf documents: some Sequence<DocumentRecord>) throws -> ([RenderJob], DocumentID?) {
        guard rendersFromModels else { return ([], nil) }
        var pages: [PageRecord] = []
        var last: DocumentID?
        for document in documents {
            guard pages.count < Self.renderedAhead else { break }
            let first = try store.read { try store.pages(of: document.id, after: 0, limit: Self.renderedAhead - pages.count) }
            pages += first.filter { $0.state != .failed }
            last = document.id
        }
        return (try renderJobs(pages), last)
    }

    /// "2 of 3 pages done (1 failed)".
    static func describe(_ counts: [PageState: Int], total: Int) -> String {
        let rest = [PageState.failed, .queued, .leased].compactMap { state in
            (counts[state] ?? 0) > 0 ? "\(counts[state]!) \(state.rawValue)" : nil
        }
        return "\(counts[.done] ?? 0) of \(total) page\(total == 1 ? "" : "s") done" + (rest.isEmpty ? "" : " (" + rest.joined(separator: ", ") + ")")
    }

    /// `file` (absolute) as a path relative to `directory` (absolute, without symbolic links): "../scans/a.png".
    /// `file` itself when `directory` is not known.
    static func relativePath(to file: String, from directory: String?) -> String {
        guard file.hasPrefix("/"), let base = directory else { return file }
        let from = base.split(separator: "/"), to = file.split(separator: "/")
        var common = 0
        while common < from.count && common < to.count - 1 && from[common] == to[common] { common += 1 }
        let up = Array(repeating: "..", count: from.count - common)
        return (up + to[common...].map(String.init)).joined(separator: "/")
    }

    static func padded(_ number: Int, _ digits: Int) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
