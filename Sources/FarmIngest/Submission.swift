import Crypto
import FarmCore
import FarmRuntime
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
    /// A file whose content changed since it was submitted replaces its old document (which is deleted) instead of
    /// becoming a second document beside it.
    public var replace: Bool = false
    /// Multi-page files larger than this are split into one file per page (next to the store) at submit, so each
    /// JOB carries its page alone (default 0: every multi-page file).
    public var splitThreshold: Int
    /// How files found in folders become documents.
    public var grouping: DocumentGrouping
    /// Which files found in folders are taken: those matching any `include` pattern (all when empty) and no
    /// `exclude` pattern; an excluded folder is not walked. Files named on the command line are always taken.
    public var filter: PathFilter

    public init(documentName: String? = nil, priority: Int = 0, pageOptions: PageOptions = PageOptions(), force: Bool = false,
                splitThreshold: Int = PageExtractor.splitThreshold, grouping: DocumentGrouping = .file,
                filter: PathFilter = PathFilter())
    {
        self.documentName = documentName
        self.priority = priority
        self.pageOptions = pageOptions
        self.force = force
        self.splitThreshold = splitThreshold
        self.grouping = grouping
        self.filter = filter
    }
}

/// How the files found in a submitted folder become documents.
public enum DocumentGrouping: String, Sendable, CaseIterable {
    /// One document per file (a multi-page TIFF or PDF is one document of its pages).
    case file
    /// The loose page images of one folder are one document, named after the folder, pages in natural order (the
    /// way an archive keeps a box or a volume); PDFs and multi-page TIFFs stay one document each.
    case folder
}

/// What a submission did.
public struct SubmitReport: Sendable {
    public init() {}

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
    /// Files found in folders that are neither images nor PDFs by content or name (notes.txt, Thumbs.db, a
    /// .json): left out, not failed.
    public var notImages: [RawPath] = []
    /// Files and folders left out by --include / --exclude.
    public var excluded: [RawPath] = []
    /// Files whose content changed since they were submitted: the earlier document, and whether it was replaced
    /// (`--replace`) or kept beside the new one.
    public var changed: [(path: RawPath, earlier: String, replaced: Bool)] = []
    /// Documents of files that could not be read when submitted, replaced now that they can.
    public var nowReadable: [RawPath] = []
    /// Files whose earlier document could not be replaced (a worker is reading it): submitted beside it.
    public var notReplaced: [(path: RawPath, reason: String)] = []

    public var pages: Int { added.reduce(0) { $0 + $1.pages } }
    public var documentIDs: [DocumentID] { added.map(\.id) }
}

/// Adds files and folders to the store: folders recursively in natural order (page2 before page10), image
/// type judged by content, multi-page TIFFs and PDFs one page each, a content hash so resubmissions are skipped.
///
/// Documents are named by their path relative to the folder that was submitted (`box17/folder3/p1.png` for
/// `submit ../archive`), a file named on the command line by its file name; the stored source is absolute.
public final class Submission {
    private let store: Store
    private let options: SubmitOptions
    private let batchSize = 256

    public init(store: Store, options: SubmitOptions) {
        self.store = store
        self.options = options
    }

    /// A file to submit, as the walk found it.
    struct Found {
        let path: RawPath
        /// The document name it gets alone: its path relative to the submitted folder, or its file name.
        let name: String
        /// The document name of its folder (for `--document-per folder`); nil for a file named on the command line.
        let folder: String?
    }

    /// What one file gave: its content hash and pages, and the messages to report when it is recorded.
    private struct Read {
        let hash: String
        let pages: [NewPage]
        let invalid: [(path: RawPath, failure: PageFailure)]
        /// A PDF or a multi-page TIFF stays one document even when files are grouped by folder.
        let isVolume: Bool
    }

    /// Pages gathered for one document from several files (`--document`, or a folder's loose pages).
    private struct Gathered {
        var pages: [NewPage] = []
        var hashes: [String] = []
        var invalid: [(path: RawPath, failure: PageFailure)] = []
        var source: RawPath
    }

    /// Submits `paths`; `progress` is called with (files done, files found) now and then.
    public func submit(_ paths: [RawPath], progress: (Int, Int) -> Void = { _, _ in }) throws -> SubmitReport {
        var report = SubmitReport()
        let files = collect(paths, report: &report)
        return try submit(files, paths: paths, report: report, progress: progress)
    }

    /// Submits files found below the folder `root` (each by its path `relative` to it), named and filtered as a
    /// walk of `root` would (`ocrfarm watch` takes files one by one as they are complete, not the whole folder).
    public func submit(_ relatives: [[UInt8]], below root: RawPath) throws -> SubmitReport {
        var report = SubmitReport()
        var files: [Found] = []
        let rootName = Self.folderName(root)
        for relative in relatives {
            let components = relative.split(separator: UInt8(ascii: "/"))
            let folders = (1..<max(components.count, 1)).map { Array(components[..<$0].joined(separator: [UInt8(ascii: "/")])) }
            guard options.filter.takes(file: relative), !folders.contains(where: options.filter.excludes(folder:)) else {
                report.excluded.append(root.appending(relative))
                continue
            }
            let parent = folders.last ?? []
            files.append(Found(path: root.appending(relative), name: RawPath(bytes: relative).description,
                               folder: parent.isEmpty ? rootName : RawPath(bytes: parent).description))
        }
        return try submit(files, paths: [root], report: report, progress: { _, _ in })
    }

    private func submit(_ files: [Found], paths: [RawPath], report: SubmitReport, progress: (Int, Int) -> Void) throws -> SubmitReport {
        var report = report
        var batch: [NewDocument] = []

        func flush() throws {
            guard !batch.isEmpty else { return }
            let ids = try store.add(batch)
            for (id, document) in zip(ids, batch) {
                report.added.append(.init(id: id, name: document.name, pages: document.pages.count,
                                          failedPages: document.pages.filter { $0.failure != nil }.count))
            }
            batch.removeAll()
        }

        /// Records one document unless its content was submitted before.
        func add(name: String, source: RawPath, hash: String, pages: [NewPage], invalid: [(path: RawPath, failure: PageFailure)],
                 shownAs path: RawPath) throws {
            if !options.force, let existing = try store.document(withHash: hash) {
                report.skipped.append((path, existing.name, existing.id))
                Self.removeParts(of: pages)
                return
            }
            report.invalid += invalid
            batch.append(NewDocument(name: name, source: source, contentHash: hash, priority: options.priority,
                                     options: options.pageOptions, pages: pages))
            if batch.count >= batchSize { try flush() }
        }

        // Sources are stored absolute: a coordinator started in another folder (a systemd unit runs in /) reads
        // the same files.
        let here = RawPath.currentDirectory
        func absolute(_ path: RawPath) -> RawPath { here.map { path.absolute(in: $0) } ?? path }
        // Documents gathered from several files, by name, in the order they were first seen.
        var gathered: [String: Gathered] = [:]
        var gatheredOrder: [String] = []
        func gather(_ read: Read, into name: String, source: RawPath) {
            if gathered[name] == nil {
                gathered[name] = Gathered(source: source)
                gatheredOrder.append(name)
            }
            gathered[name]!.pages += read.pages
            gathered[name]!.hashes.append(read.hash)
            gathered[name]!.invalid += read.invalid
        }

        for (index, found) in files.enumerated() {
            if index % 64 == 0 { progress(index, files.count) }
            guard let read = read(found, absolute: absolute, report: &report) else { continue }
            if let name = options.documentName {
                gather(read, into: name, source: paths.count == 1 ? absolute(paths[0]) : RawPath(name))
            } else if options.grouping == .folder, let folder = found.folder, !read.isVolume {
                gather(read, into: folder, source: absolute(found.path.parent))
            } else {
                let source = absolute(found.path)
                if !options.force, try store.document(withHash: read.hash) == nil {
                    try replaceEarlier(of: found.path, source: source, hash: read.hash, report: &report)
                }
                try add(name: found.name, source: source, hash: read.hash, pages: read.pages, invalid: read.invalid,
                        shownAs: found.path)
            }
        }
        for name in gatheredOrder {
            guard let group = gathered[name], !group.pages.isEmpty else { continue }
            let hash = group.hashes.count == 1 && options.documentName == nil
                ? group.hashes[0] : SHA256.hex(Array(group.hashes.joined(separator: "\n").utf8))
            try add(name: name, source: group.source, hash: hash, pages: group.pages, invalid: group.invalid, shownAs: RawPath(name))
        }
        try flush()
        progress(files.count, files.count)
        return report
    }

    /// A file submitted before under another content: a document that failed as unreadable is replaced now that the
    /// file reads (its failed page said "submit it again once it can be read"); a document of other content is
    /// replaced with `--replace`, else kept beside the new one and reported.
    private func replaceEarlier(of path: RawPath, source: RawPath, hash: String, report: inout SubmitReport) throws {
        let unreadable = "unreadable " + SHA256.hex(path.bytes)
        for (record, earlier) in try store.documents(fromSource: source) where earlier != hash {
            let wasUnreadable = earlier == unreadable
            guard wasUnreadable || options.replace else {
                report.changed.append((path, record.name, false))
                return
            }
            do {
                let deleted = try store.delete([record.id])
                for file in deleted.splitFiles { FileSystem.remove(file.description) }
            } catch let refusal as DeleteRefusal {
                report.notReplaced.append((path, "\(refusal)"))
                return
            }
            if wasUnreadable { report.nowReadable.append(path) } else { report.changed.append((path, record.name, true)) }
        }
    }

    /// Reads one file: its hash and pages; nil when it is gone since the walk, or is not a page at all (a file
    /// found in a folder that is neither an image nor a PDF, by content and by name: it is counted, not failed).
    private func read(_ found: Found, absolute: (RawPath) -> RawPath, report: inout SubmitReport) -> Read? {
        let path = found.path
        let source = absolute(path)
        do throws(FileError) {
            if found.folder != nil, !Self.namedAsPage(path) {
                // Only the first bytes decide, so a video or an archive beside the scans is never read whole.
                let head = try FileSystem.readPrefix(path, count: SourceInspector.sniffLength, regularOnly: true)
                if !head.isEmpty, !SourceInspector.looksLikePage(head) {
                    report.notImages.append(path)
                    return nil
                }
            }
            // Hashed as it is read, in one pass. Only TIFF and PDF files are inspected past their head (their
            // pages); any other file is kept only as far as its head, which is all inspection reads of it.
            let hasher = SHA256.Hasher()
            let scan = try FileSystem.read(path, regularOnly: true, keepingAll: Self.isMultiPage, along: { hasher.update($0) })
            let hash = SHA256.hex(digest: hasher.finish())
            let (pages, inspection) = self.pages(of: scan.bytes, size: scan.size, path: path, source: source, hash: hash,
                                                 pageFolder: absolute(RawPath(store.path + ".pages/" + hash)))
            return Read(hash: hash, pages: pages, invalid: pages.compactMap { page in page.failure.map { (path, $0) } },
                        isVolume: inspection.pages > 1 || inspection.kind == .pdf)
        } catch where error.code == ENOENT {
            // Gone since the folder was listed: nothing to record.
            report.problems.append((path, error.reason))
            return nil
        } catch {
            // A file that is there but cannot be read (no permission, an I/O error) is recorded as a failed page,
            // so `status` shows it by code. With no content to know it by, its path stands in for the content hash,
            // so submitting it again while it is still unreadable skips it; once it can be read, submitting it
            // again replaces this document with one of its real pages (a requeue could not: the page count was
            // unknown; see `replaceEarlier`).
            let failure = PageFailure(stage: SourceInspector.stage, code: .unreadable,
                                      message: "cannot read the file: \(error.reason)")
            return Read(hash: "unreadable " + SHA256.hex(path.bytes),
                        pages: [NewPage(source: source, index: 0, kind: .image, failure: failure)],
                        invalid: [(path, failure)], isVolume: false)
        }
    }

    /// Whether a file's name says it is a page (an image or PDF ending): such a file is submitted whatever its
    /// content, so a damaged scan fails with its reason instead of vanishing.
    static func namedAsPage(_ path: RawPath) -> Bool {
        guard let dot = path.bytes.lastIndex(of: UInt8(ascii: ".")),
              !path.bytes[dot...].contains(UInt8(ascii: "/")) else { return false }
        let ending = String(decoding: path.bytes[(dot + 1)...], as: UTF8.self).lowercased()
        return PageFiles.endings.contains(ending)
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
                       pageFolder: RawPath) -> ([NewPage], SourceInspection) {
        let inspection = SourceInspector.inspect(bytes, name: path.description)
        if let failure = inspection.failure {
            return ([NewPage(source: source, index: 0, kind: .invalid, failure: failure)], inspection)
        }
        let parts = inspection.pages > 1 && size > options.splitThreshold
            ? Self.parts(of: bytes, size: size, inspection: inspection, path: path, folder: pageFolder) : nil
        return ((0..<inspection.pages).map {
            NewPage(source: source, index: $0, kind: inspection.kind, sourceHash: hash, sourceSize: size, part: parts?[$0])
        }, inspection)
    }

    /// A multi-page file split once, here, into a folder of its own beside the store (decision 0084), so each JOB
    /// carries its page alone rather than the whole file; each part is recorded by its own hash and size, which the
    /// coordinator checks before sending it. The page itself stays the page of the file as submitted. A part no
    /// smaller than the whole file (a TIFF frame re-encoded losslessly can grow) is dropped: that page goes whole.
    /// Nil when the file cannot be split (its pages are then sent in the whole file, as before).
    static func parts(of bytes: [UInt8], size: Int, inspection: SourceInspection, path: RawPath,
                      folder base: RawPath) -> [PagePart?]? {
        guard bytes.count == size, let folder = uniqueFolder(base) else { return nil }
        guard let files = try? PageExtractor.split(bytes, kind: inspection.kind, source: path, pages: inspection.pages,
                                                   into: folder.description),
              files.count == inspection.pages else {
            FileSystem.remove(folder)
            return nil
        }
        let parts = files.map { file -> PagePart? in
            guard let file else { return nil }
            let hasher = SHA256.Hasher()
            guard let part = try? FileSystem.read(file, regularOnly: true, followLinks: false, keepingAll: { _ in false },
                                                  along: { hasher.update($0) }),
                  part.size < size else {
                FileSystem.remove(file)
                return nil
            }
            return PagePart(path: file, sha256: SHA256.hex(digest: hasher.finish()), size: part.size)
        }
        if parts.allSatisfy({ $0 == nil }) {
            FileSystem.remove(folder)
            return nil
        }
        return parts
    }

    /// A new folder named `base`, or `base-2`, `base-3`…: the parts of each submission are its own, so deleting
    /// one document (or finishing its pages) never takes the parts of another submitted with the same content.
    static func uniqueFolder(_ base: RawPath) -> RawPath? {
        try? FileSystem.makeDirectory(base.parent.description)
        for number in 1...1000 {
            let candidate = number == 1 ? base : RawPath(bytes: base.bytes + Array("-\(number)".utf8))
            if candidate.withCString({ mkdir($0, 0o755) }) == 0 { return candidate }
            if errno != EEXIST { return nil }
        }
        return nil
    }

    /// Removes the part folders of pages that are not recorded after all (their content was submitted before).
    static func removeParts(of pages: [NewPage]) {
        for folder in Set(pages.compactMap { $0.part?.path.parent }) { FileSystem.remove(folder) }
    }

    /// The files named by `paths`, folders expanded recursively in natural order, each file once.
    func collect(_ paths: [RawPath], report: inout SubmitReport) -> [Found] {
        var files: [Found] = []
        // The store and its journal files live among the pages more often than not; never submit them.
        var seenFiles = Set<FileSystem.Identity>(["", "-wal", "-shm", "-journal", "-lock"].compactMap { suffix in
            (try? FileSystem.status(store.path + suffix))?.identity
        })
        var visiting = Set<FileSystem.Identity>()
        // Nor the folder where big files are split into pages.
        let pageCache = (try? FileSystem.status(store.path + ".pages"))?.identity
        let filter = options.filter

        /// `relative`: the path below the submitted folder (empty for the submitted path itself); `rootName`: the
        /// submitted folder's own name, which names the document of its loose pages.
        func walk(_ path: RawPath, relative: [UInt8], rootName: String, depth: Int) {
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
                if depth > 0, filter.excludes(folder: relative) {
                    report.excluded.append(path)
                    return
                }
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
                    let below = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
                    walk(path.appending(name), relative: below, rootName: rootName, depth: depth + 1)
                }
            case .file:
                if depth == 0 {
                    // Named on the command line: taken whatever the filters say, named by its file name.
                    if seenFiles.insert(key).inserted {
                        files.append(Found(path: path, name: RawPath(bytes: path.lastComponent).description, folder: nil))
                    }
                    return
                }
                guard filter.takes(file: relative) else {
                    report.excluded.append(path)
                    return
                }
                guard seenFiles.insert(key).inserted else { return }
                let parent = relative.lastIndex(of: UInt8(ascii: "/")).map { Array(relative[..<$0]) } ?? []
                files.append(Found(path: path, name: RawPath(bytes: relative).description,
                                   folder: parent.isEmpty ? rootName : RawPath(bytes: parent).description))
            case .symlink, .other:
                report.problems.append((path, "not a regular file"))
            }
        }

        for path in paths {
            walk(path, relative: [], rootName: Self.folderName(path), depth: 0)
        }
        return files
    }

    /// The name of a submitted folder's own document (its loose pages under `--document-per folder`): its last
    /// component, or the current folder's for `.`.
    static func folderName(_ path: RawPath) -> String {
        let canonical = FileSystem.canonicalPath(path) ?? path
        let last = canonical.lastComponent
        return last.isEmpty ? "/" : RawPath(bytes: last).description
    }
}
