import Crypto
import FarmCore
import FarmStore
import Leptonica
#if canImport(Glibc)
import Glibc
#endif

/// What `submit` was asked to do.
public struct SubmitOptions: Sendable {
    /// Put every file into one document with this name (pages in order); nil: one document per file.
    public var documentName: String?
    public var priority: Int
    public var pageOptions: PageOptions
    /// Submit files again even when the same content was submitted before.
    public var force: Bool
    /// Multi-page files larger than this are split into one file per page (next to the store) at submit.
    public var splitThreshold: Int

    public init(documentName: String? = nil, priority: Int = 0, pageOptions: PageOptions = PageOptions(), force: Bool = false,
                splitThreshold: Int = PageExtractor.splitThreshold)
    {
        self.documentName = documentName
        self.priority = priority
        self.pageOptions = pageOptions
        self.force = force
        self.splitThreshold = splitThreshold
    }
}

/// What a submission did.
public struct SubmitReport: Sendable {
    public struct Added: Sendable {
        public let id: DocumentID
        public let name: String
        public let pages: Int
        public let failedPages: Int
    }

    public var added: [Added] = []
    /// Files whose content was submitted before (and the document that holds it).
    public var skipped: [(path: RawPath, existing: String, id: DocumentID)] = []
    /// Paths that are not files to read (missing, symbolic link loops, FIFOs and devices): nothing was recorded for them.
    public var problems: [(path: RawPath, reason: String)] = []
    /// Files recorded as failed pages right away (not images, empty, encrypted PDFs, no read permission…).
    public var invalid: [(path: RawPath, failure: PageFailure)] = []
    /// Hidden entries (names starting with ".") left out of the folders walked, and the first few of them.
    public var hidden = 0
    public var hiddenExamples: [RawPath] = []

    public var pages: Int { added.reduce(0) { $0 + $1.pages } }
    public var documentIDs: [DocumentID] { added.map(\.id) }
}

/// Adds files and folders to the store: folders recursively in natural order (page2 before page10), image
/// type judged by content, multi-page TIFFs and PDFs one page each, a content hash so resubmissions are skipped.
public final class Submission {
    private let store: Store
    private let options: SubmitOptions
    private let batchSize = 256

    public init(store: Store, options: SubmitOptions) {
        self.store = store
        self.options = options
    }

    /// Submits `paths`; `progress` is called with (files done, files found) now and then.
    public func submit(_ paths: [RawPath], progress: (Int, Int) -> Void = { _, _ in }) throws -> SubmitReport {
        var report = SubmitReport()
        let files = collect(paths, report: &report)
        var batch: [NewDocument] = []
        var combined: (pages: [NewPage], hashes: [String], invalid: [(path: RawPath, failure: PageFailure)]) = ([], [], [])

        func flush() throws {
            guard !batch.isEmpty else { return }
            let ids = try store.add(batch)
            for (id, document) in zip(ids, batch) {
                report.added.append(.init(id: id, name: document.name, pages: document.pages.count,
                                          failedPages: document.pages.filter { $0.failure != nil }.count))
            }
            batch.removeAll()
        }

        // Sources are stored absolute: a coordinator started in another folder (a systemd unit runs in /) reads
        // the same files. Names stay as typed, relative to what was submitted.
        let here = RawPath.currentDirectory
        func absolute(_ path: RawPath) -> RawPath { here.map { path.absolute(in: $0) } ?? path }
        for (index, path) in files.enumerated() {
            if index % 64 == 0 { progress(index, files.count) }
            let hash: String
            let pages: [NewPage]
            let source = absolute(path)
            do throws(FileError) {
                // Hashed as it is read, in one pass. Only TIFF and PDF files are inspected past their head (their
                // pages); any other file is kept only as far as its head, which is all inspection reads of it.
                let hasher = SHA256.Hasher()
                let scan = try FileSystem.read(path, regularOnly: true, keepingAll: Self.isMultiPage,
                                               along: { hasher.update($0) })
                hash = SHA256.hex(digest: hasher.finish())
                pages = self.pages(of: scan.bytes, size: scan.size, path: path, source: source, hash: hash,
                                   pageFolder: absolute(RawPath(store.path + ".pages/" + hash)))
            } catch where error.code == ENOENT {
                // Gone since the folder was listed: nothing to record.
                report.problems.append((path, error.reason))
                continue
            } catch {
                // A file that is there but cannot be read (no permission, an I/O error) is recorded as a failed page,
                // so `status` shows it by code. With no content to know it by, its path stands in for the content hash,
                // so submitting it again while it is still unreadable skips it; once it can be read, submitting it
                // again makes a new document of its real pages (a requeue could not: the page count was unknown).
                let failure = PageFailure(stage: SourceInspector.stage, code: .unreadable,
                                          message: "cannot read the file: \(error.reason)")
                hash = "unreadable " + SHA256.hex(path.bytes)
                pages = [NewPage(source: source, index: 0, kind: .image, failure: failure)]
            }
            // Unusable files are reported when they are recorded, not when they are skipped as submitted before.
            let invalid = pages.compactMap { page in page.failure.map { (path, $0) } }
            if options.documentName != nil {
                combined.pages += pages
                combined.hashes.append(hash)
                combined.invalid += invalid
                continue
            }
            if !options.force, let existing = try store.document(withHash: hash) {
                report.skipped.append((path, existing.name, existing.id))
                continue
            }
            report.invalid += invalid
            batch.append(NewDocument(name: path.description, source: source, contentHash: hash, priority: options.priority,
                                     options: options.pageOptions, pages: pages))
            if batch.count >= batchSize { try flush() }
        }
        if let name = options.documentName, !combined.pages.isEmpty {
            let hash = SHA256.hex(Array(combined.hashes.joined(separator: "\n").utf8))
            if !options.force, let existing = try store.document(withHash: hash) {
                report.skipped.append((RawPath(name), existing.name, existing.id))
            } else {
                report.invalid += combined.invalid
                batch.append(NewDocument(name: name, source: paths.count == 1 ? absolute(paths[0]) : RawPath(name), contentHash: hash,
                                         priority: options.priority, options: options.pageOptions, pages: combined.pages))
            }
        }
        try flush()
        progress(files.count, files.count)
        return report
    }

    /// A file whose first bytes say TIFF or PDF: `SourceInspector` reads all of it (a TIFF's directories and a PDF's
    /// page tree may be anywhere); of any other it reads only the first bytes (the format, 512 bytes of text).
    static func isMultiPage(head: [UInt8]) -> Bool {
        let format = ImageFormat.sniff(head)
        return format.isTIFF || format == .pdf
    }

    /// The pages of one file's bytes (`size` of them; all of them unless it is neither TIFF nor PDF): one failed
    /// page when it is unusable, a multi-page file's pages (split into files of their own when it is big).
    /// `path` names the file in messages; `source` is its absolute path, stored; a big multi-page file is split
    /// into `pageFolder` (absolute too).
    private func pages(of bytes: [UInt8], size: Int, path: RawPath, source: RawPath, hash: String,
                       pageFolder: RawPath) -> [NewPage] {
        let inspection = SourceInspector.inspect(bytes, name: path.description)
        if let failure = inspection.failure {
            return [NewPage(source: source, index: 0, kind: .invalid, failure: failure)]
        }
        if inspection.pages > 1 && size > options.splitThreshold,
           let files = try? PageExtractor.split(bytes, kind: inspection.kind, source: path, pages: inspection.pages,
                                                into: pageFolder.description),
           files.count == inspection.pages {
            // A big multi-page file is split once, here, so each job carries one page rather than the file; each
            // part is recorded by its own hash and size, as the coordinator will check it (read once, not kept).
            return files.map { file in
                let hasher = SHA256.Hasher()
                let part = try? FileSystem.read(file, regularOnly: true, keepingAll: { _ in false },
                                                along: { hasher.update($0) })
                return NewPage(source: file, index: 0, kind: inspection.kind,
                               sourceHash: part.map { _ in SHA256.hex(digest: hasher.finish()) }, sourceSize: part?.size)
            }
        }
        return (0..<inspection.pages).map {
            NewPage(source: source, index: $0, kind: inspection.kind, sourceHash: hash, sourceSize: size)
        }
    }

    /// The files named by `paths`, folders expanded recursively in natural order, each file once.
    private func collect(_ paths: [RawPath], report: inout SubmitReport) -> [RawPath] {
        var files: [RawPath] = []
        // The store and its journal files live among the pages more often than not; never submit them.
        var seenFiles = Set<FileSystem.Identity>(["", "-wal", "-shm", "-journal", "-lock"].compactMap { suffix in
            (try? FileSystem.status(store.path + suffix))?.identity
        })
        var visiting = Set<FileSystem.Identity>()
        // Nor the folder where big files are split into pages.
        let pageCache = (try? FileSystem.status(store.path + ".pages"))?.identity

        func walk(_ path: RawPath, depth: Int) {
            let status: FileSystem.Status
            do throws(FileError) {
                status = try FileSystem.status(path)
            } catch {
                let reason = error.code == ELOOP ? "symbolic link loop" : error.reason
                report.problems.append((path, reason))
                return
            }
            let key = status.identity
            switch status.kind {
            case .directory:
                if key == pageCache { return }
                guard !visiting.contains(key), depth < 64 else {
                    report.problems.append((path, "symbolic link loop (the folder contains itself)"))
                    return
                }
                visiting.insert(key)
                defer { visiting.remove(key) }
                let names: [[UInt8]]
                do throws(FileError) {
                    names = try FileSystem.entries(path)
                } catch {
                    report.problems.append((path, error.reason))
                    return
                }
                let ordered = names.sorted { a, b in
                    NaturalOrder.areInIncreasingOrder(String(decoding: a, as: UTF8.self), String(decoding: b, as: UTF8.self))
                }
                for name in ordered {
                    // Hidden entries (.DS_Store, .git, editors' swap files) are left out, and counted so the
                    // report says so; a hidden file named on the command line is submitted.
                    guard name.first != UInt8(ascii: ".") else {
                        report.hidden += 1
                        if report.hiddenExamples.count < 3 { report.hiddenExamples.append(path.appending(name)) }
                        continue
                    }
                    walk(path.appending(name), depth: depth + 1)
                }
            case .file:
                if seenFiles.insert(key).inserted { files.append(path) }
            case .symlink, .other:
                report.problems.append((path, "not a regular file"))
            }
        }

        for path in paths { walk(path, depth: 0) }
        return files
    }
}
