import FarmCore
import FarmIngest
import FarmLocal
import FarmRuntime
import FarmStore

/// `ocrfarm watch`: a watch folder. Files put into it are submitted once each when complete and read by the
/// farm of `run` (an embedded coordinator and local workers), or by a coordinator that serves the store.
struct WatchCommand: Command {
    static let name = "watch"
    static let abstract = "Watch a folder: read each image or PDF put into it once, when it is complete."
    static let arguments = "DIR"
    /// Submit options that do not fit files arriving one by one: one document of every file, a folder's files as
    /// one document (when would the folder be complete?), and submitting known content again (the watcher would
    /// loop on its own moves).
    static let leftOut: Set<String> = ["--document", "--document-per", "--force"]
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--done-to", value: "DIR2", "Move each file there (same path below it) once its document is finished (every page done or failed); the store follows it."),
        OptionSpec("--quiet", value: "SECONDS", "A file is taken when it has been left alone this long, size and time unchanged (default: 2)."),
        OptionSpec("--no-workers", "Only submit: the coordinator that serves the store (ocrfarm coordinator) and its workers read the pages."),
    ] + RunCommand.options.filter { $0.name != StoreOption.spec.name && !leftOut.contains($0.name) }
    static let discussion = """
    The folder and the folders below it are watched (inotify). A file is taken once it is complete: written and
    closed, or moved in, then left alone for --quiet seconds with its size and time unchanged, so a file still being
    copied (also by tools that close and reopen it) is never read half-written. Each file is read once: the store
    knows what was taken by its content (SHA-256), so a file moved out and back, a restart of the watcher and a
    file already in the store are not read again (at start, the files already in the folder are taken unless the
    store has them). Hidden files and editors' and downloads' temporary files (name~, .swp, .part, .crdownload,
    .tmp) are ignored; a temporary file renamed to its final name is taken under that name. Files that are not
    images or PDFs are left out and counted, as by submit. Documents are named by their path below DIR.

    With --done-to, a file is moved to DIR2 (the same path below it) when every page of its document is done or
    failed; a DIR2 inside DIR is not watched. The store follows a moved file (its pages name it in DIR2, so the
    viewer, IIIF and export find it there) when it is still the file submitted (its size and SHA-256); a file that
    changed is moved with a warning and the store keeps its old path. Keep the store outside DIR.

    By default the watcher runs the farm of `run` in this process: an embedded coordinator and local worker
    processes (log in STORE.log). With --no-workers it only submits, and a coordinator serving the store reads the
    pages (--done-to still moves the finished files). Ctrl-C or SIGTERM stops it: pages being read are finished or
    given back, and a summary says what was taken and what the store holds.

    Exit status: 0 stopped by a signal; 64 bad usage; 66 DIR is not a folder, or not an ocrfarm store; 69 a language is
    not installed; 70 the embedded coordinator or the workers failed (STORE.log says why); 73 the store cannot be
    made or written; 74 the disk is full, or the store was moved or deleted; 75 a coordinator serves the store
    (use --no-workers); 76 the store is damaged.
    """

    let folder: RawPath
    let doneTo: RawPath?
    let quietMilliseconds: Int64
    let noWorkers: Bool
    /// The farm options (workers, engine, retries, logs) and the submit options, parsed as `run` parses them.
    let farm: RunCommand

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.count == 1 else { throw UsageError(message: "watch takes one folder") }
        folder = RawArguments.paths(arguments.positionals)[0]
        doneTo = arguments.string("--done-to").map { RawPath($0) }
        quietMilliseconds = Int64((try arguments.double("--quiet", range: 0...3600) ?? 2) * 1000)
        noWorkers = arguments.flag("--no-workers")
        farm = try RunCommand(arguments)
    }

    func run() throws -> ExitStatus {
        Shutdown.install()
        let options = farm.submitOptions
        if farm.engine == .page && !noWorkers { try EngineCheck.engine(options.pageOptions.engine, languages: options.pageOptions.languages) }
        guard FileSystem.isDirectory(folder.description), let root = FileSystem.canonicalPath(folder) else {
            Console.error("ocrfarm watch: \(folder): not a folder")
            return .noInput
        }
        let target = try doneFolder(besides: root)
        let lock = noWorkers ? nil : try CoordinatorLocking.take(farm.storePath)
        defer { withExtendedLifetime(lock) {} }
        let store = try Store(path: farm.storePath)
        try store.checkSound()
        // The store's own files are never taken, should it live in the watched folder after all.
        let storeFiles = Set(["", "-wal", "-shm", "-journal", "-lock", ".log"].compactMap { suffix in
            FileSystem.canonicalPath(RawPath(farm.storePath + suffix))
        })
        let watcher: WatchFolder
        do {
            watcher = try WatchFolder(root: root, quietMilliseconds: quietMilliseconds, skipFolder: target)
        } catch {
            throw CommandFailure(.noInput, error.description)
        }
        let supervisor = try farm.startFarm(!noWorkers)
        defer { supervisor.stop() }
        let submission = Submission(store: store, options: options)
        Console.error("watching \(root)" + (target.map { "; finished files go to \($0)" } ?? "") + " (Ctrl-C stops)")
        var tally = WatchTally(root: root, target: target, verbose: farm.verbose)
        let started = Clock.monotonicMilliseconds
        _ = try supervisor.supervise(pauseMilliseconds: 0) {
            watcher.poll(timeout: 200)
            for (relative, reason) in watcher.takeRefused() {
                Console.error("ocrfarm watch: \(Printable.text(RawPath(bytes: relative).description)) left out: \(reason)")
            }
            for relative in watcher.takeComplete() {
                if let path = FileSystem.canonicalPath(root.appending(relative)), storeFiles.contains(path) { continue }
                tally.took(relative, as: try submission.submit([relative], below: root))
            }
            try tally.moveFinished(store: store)
            return .goOn
        }
        var givenBack = 0
        if supervisor.runsFarm {
            Console.error("stopping: finishing the pages being read (up to 5 s)…")
            givenBack = supervisor.stop(givingBackLeasesOf: store)
        }
        let counts = try store.counts(of: tally.documents.sorted())
        let elapsed = Double(Clock.monotonicMilliseconds - started) / 1000
        Console.error(tally.summary(elapsed: elapsed, counts: counts, temporaryIgnored: watcher.temporaryIgnored,
                                    refused: watcher.refusedCount, givenBack: givenBack))
        return .success
    }

    /// The --done-to folder (made if missing), canonical; nil without it.
    private func doneFolder(besides root: RawPath) throws -> RawPath? {
        guard let doneTo else { return nil }
        try? FileSystem.makeDirectory(doneTo.description)
        guard FileSystem.isDirectory(doneTo.description), let canonical = FileSystem.canonicalPath(doneTo) else {
            throw UsageError(message: "--done-to \(doneTo): not a folder, and it cannot be made")
        }
        guard canonical != root else { throw UsageError(message: "--done-to must be another folder than the watched one") }
        return canonical
    }
}

/// What `watch` took, left out and moved, said file by file as it happens and summed up at the end.
private struct WatchTally {
    let root: RawPath
    /// The --done-to folder.
    let target: RawPath?
    let verbose: Bool
    var taken = 0, pages = 0, known = 0, leftOut = 0, unusable = 0, moved = 0
    /// The documents of the files taken.
    var documents = Set<DocumentID>()
    /// Files to move to the done folder, by the document that holds them.
    private var awaiting: [DocumentID: [[UInt8]]] = [:]
    private var lastDoneCheck: Int64 = 0

    init(root: RawPath, target: RawPath?, verbose: Bool) {
        self.root = root
        self.target = target
        self.verbose = verbose
    }

    /// Counts and says what the submit of the file at `relative` (below the root) did.
    mutating func took(_ relative: [UInt8], as report: SubmitReport) {
        let shown = Printable.text(RawPath(bytes: relative).description)
        var document: DocumentID?
        if let added = report.added.first {
            taken += 1
            pages += added.pages
            documents.insert(added.id)
            document = added.id
            Console.error("took \(shown): \(added.pages) page\(added.pages == 1 ? "" : "s")"
                          + (added.failedPages > 0 ? " (\(added.failedPages) unusable, recorded as failed)" : ""))
            unusable += report.invalid.count
        } else if let skipped = report.skipped.first {
            known += 1
            document = skipped.id
            Console.error("\(shown): already submitted as '\(Printable.text(skipped.existing))'; not read again")
        } else {
            leftOut += 1
            let reason = !report.notImages.isEmpty ? "neither an image nor a PDF"
                : !report.excluded.isEmpty ? "left out by --include/--exclude"
                : report.problems.first?.reason ?? "not submitted"
            if verbose || !report.problems.isEmpty { Console.error("\(shown): left out: \(reason)") }
        }
        for (path, earlier, replaced) in report.changed {
            Console.error(replaced ? "\(path): changed since it was submitted; replaces '\(Printable.text(earlier))'"
                : "\(path): changed since it was submitted as '\(Printable.text(earlier))'; a new document beside it (--replace replaces it)")
        }
        if target != nil, let document { awaiting[document, default: []].append(relative) }
    }

    /// Every half second: the files of documents with no page queued or leased move to the done folder.
    mutating func moveFinished(store: Store) throws {
        let now = Clock.monotonicMilliseconds
        guard let target, !awaiting.isEmpty, now - lastDoneCheck >= 500 else { return }
        lastDoneCheck = now
        for (document, files) in awaiting {
            let counts = try store.counts(of: [document])
            guard (counts[.queued] ?? 0) + (counts[.leased] ?? 0) == 0 else { continue }
            awaiting[document] = nil
            for relative in files { move(relative, of: document, to: target, store: store) }
        }
    }

    /// Moves one finished file; the store follows it, so the viewer, IIIF and export find it there.
    private mutating func move(_ relative: [UInt8], of document: DocumentID, to target: RawPath, store: Store) {
        let shown = Printable.text(RawPath(bytes: relative).description)
        do {
            switch try FinishedFile.move(relative, from: root, to: target, document: document, store: store) {
            case .followed, .unrecorded: moved += 1
            case .changed(let reason):
                moved += 1
                Console.error("ocrfarm watch: \(shown) changed since it was submitted (\(reason)); moved to "
                              + "\(target), and the store keeps its old path")
            case .kept(let reason):
                Console.error("ocrfarm watch: \(shown) left in place: \(reason)")
            }
        } catch let error as FileError {
            Console.error("ocrfarm watch: cannot move \(error.path) to \(target): \(error.reason)")
        } catch {
            Console.error("ocrfarm watch: \(shown) left in place: the store cannot record its move: \(error)")
        }
    }

    /// The closing line: what was taken, and what the store holds of the pages taken.
    func summary(elapsed: Double, counts: [PageState: Int], temporaryIgnored: Int, refused: Int, givenBack: Int) -> String {
        var summary = "watched \(Format.fixed(elapsed, 1)) s: took \(taken) file\(taken == 1 ? "" : "s") (\(pages) page\(pages == 1 ? "" : "s"))"
        summary += ", \(known) already submitted (not read again), \(leftOut) left out, \(temporaryIgnored) temporary ignored"
        if unusable > 0 { summary += ", \(unusable) unusable" }
        if refused > 0 { summary += ", \(refused) link\(refused == 1 ? "" : "s") or special file\(refused == 1 ? "" : "s") refused" }
        if target != nil { summary += ", \(moved) moved to the done folder" }
        summary += "; of the pages taken: \(counts[.done] ?? 0) done, \(counts[.failed] ?? 0) failed, "
            + "\((counts[.queued] ?? 0) + (counts[.leased] ?? 0)) left queued"
        if givenBack > 0 { summary += " (\(givenBack) being read given back)" }
        return summary
    }
}
