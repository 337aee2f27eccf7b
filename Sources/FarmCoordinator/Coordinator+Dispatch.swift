import FarmCore
import FarmProtocol
import FarmRuntime
import FarmStore
#if canImport(Glibc)
import Glibc
#endif

/// Dispatch: choosing pages for workers with credit, and sending their JOBs once the leases are committed.
extension Coordinator {
    /// Chooses pages for workers with credit, round robin, from a small buffer of the queue's head: first one page
    /// for each idle slot, then prefetch (a page waiting beside a busy slot, to hide the network), but prefetch
    /// only while more pages wait than the farm has slots. At the end of a batch a prefetched page would sit
    /// behind a busy slot while another worker's slot idles: the batch would end a page later.
    func assign() -> [(QueuedPage, WorkerState)] {
        prefetchHeld = false
        let hungry = workers.values.filter { $0.credit > 0 }.sorted { $0.id < $1.id }
        guard !hungry.isEmpty else { return [] }
        let wanted = hungry.reduce(0) { $0 + $1.credit }
        let farmSlots = workers.values.reduce(0) { $0 + $1.slots }
        refillIfNeeded(wanted: wanted, spare: farmSlots)
        var assignments: [(QueuedPage, WorkerState)] = []
        func deal(_ allowance: (WorkerState) -> Int) {
            var takers = hungry.map { ($0, min($0.credit, allowance($0))) }.filter { $0.1 > 0 }
            var index = 0
            while !takers.isEmpty && readyHead < ready.count {
                let slot = index % takers.count
                let worker = takers[slot].0
                assignments.append((ready[readyHead], worker))
                readyHead += 1
                worker.credit -= 1
                takers[slot].1 -= 1
                if takers[slot].1 == 0 { takers.remove(at: slot) } else { index += 1 }
            }
        }
        deal { worker in max(0, worker.slots - worker.leases.count) }
        if ready.count - readyHead > farmSlots {
            deal { _ in Int.max }
        } else if readyHead < ready.count {
            prefetchHeld = true
        }
        return assignments
    }

    /// Keeps enough of the queue's head in memory for what is wanted now plus one page per slot of the farm (to
    /// judge whether prefetch can be spared). A store that had no more to give is asked again only now and then.
    func refillIfNeeded(wanted: Int, spare: Int) {
        let buffered = ready.count - readyHead
        guard buffered < wanted + spare + 1 else { return }
        let now = time.monotonicMilliseconds
        if storeExhausted && buffered > 0 && now - lastRefill < 200 { return }
        if ready.isEmpty && now - lastRefill < 200 { return }
        lastRefill = now
        let limit = min(4096, max(64, (wanted + spare) * 4))
        ready = (try? store.queuedPages(limit: limit, now: time.now)) ?? []
        readyHead = 0
        storeExhausted = ready.count < limit
    }

    func dispatch(_ page: QueuedPage, attempt: AttemptID, to worker: WorkerState, leasedAt: Double) {
        let source = page.pageCount > 1 ? "\(page.documentName) page \(page.number)" : page.documentName
        labels[attempt] = source
        var payload: Payload
        let read = Self.payload(of: page, limit: configuration.maxPageBytes) { [store] source, read in
            // An old store's page: its file's hash is recorded at the first read, and checked at every later one.
            do { try store.recordSourceHash(of: source, read: read) } catch {
                Log.warning("cannot record a page file's hash", ["file": source.path.description, "error": "\(error)"])
            }
        }
        switch read {
        case .success(let read): payload = read
        case .failure(let failure):
            worker.credit += 1
            pending.append(.failure(attempt, worker: worker.id, failure: failure, startedAt: leasedAt, outcome: .failed))
            return
        }
        if payload.isPart { partPages.insert(page.id) }
        let options = optionsCache[page.optionsJSON] ?? {
            let parsed = PageOptions(json: try? JSON.parse(page.optionsJSON))
            if optionsCache.count > 10_000 { optionsCache.removeAll() }
            optionsCache[page.optionsJSON] = parsed
            return parsed
        }()
        let size = payload.bytes.count
        let job = Job(attempt: attempt, source: source, kind: page.source.kind, index: payload.index,
                      options: options, bytes: payload.bytes, sha256: payload.sha256)
        payload.bytes = []
        worker.leases[page.id] = LeaseInfo(attempt: attempt, document: page.document, startedAt: leasedAt)
        if send(.job(job), to: worker) {
            counters.dispatched += 1
            counters.jobBytes += size
            if let waited = worker.creditAnswered() { counters.dispatchWait.record(nanoseconds: waited) }
            if let line = line(PageEvent(.debug, "page leased", attempt, worker.id, final: false)) { Console.error(line) }
        }
    }

    /// What a JOB carries for a page: the bytes, the page within them, and their SHA-256 for the worker to check.
    struct Payload {
        var bytes: [UInt8]
        var index: Int
        var sha256: String?
        var isPart: Bool
    }

    /// Reads what to send for `page`, once, through the one reader of a page's file (`SourceRef.read`): its part
    /// when it has one (the page alone, split out at submit), else its source file. Either is opened only if it is
    /// not a link itself and is a regular file, and checked against the size and SHA-256 recorded at submit
    /// before a byte leaves; the one read serves the check and the send. A part that is not there (the page folder
    /// was cleaned by hand) falls back to the whole source file, checked as ever. A source file of an old store,
    /// without a recorded hash, is sent as read, and `recordHash` is given what it read, for the store to check
    /// every later read against.
    static func payload(of page: QueuedPage, limit: Int,
                        recordHash: (SourceRef, SourceBytes) -> Void = { _, _ in }) -> Result<Payload, PageFailure> {
        if let part = page.part {
            do throws(SourceError) {
                let read = try SourceRef(path: part.path, kind: page.source.kind, hash: part.sha256, size: part.size).read(limit: limit)
                return .success(Payload(bytes: read.bytes, index: 0, sha256: part.sha256, isPart: true))
            } catch where error.problem != .missing {
                return .failure(failure(error, limit: limit))
            } catch {}
        }
        let source = page.source
        do throws(SourceError) {
            let read = try source.read(limit: limit)
            if read.unchecked { recordHash(source, read) }
            return .success(Payload(bytes: read.bytes, index: page.source.index, sha256: read.sha256, isPart: false))
        } catch {
            return .failure(failure(error, limit: limit))
        }
    }

    /// Why a page's file is not sent, as the page's failure: a link, a changed or missing file is `source-changed`
    /// (nothing of it is sent; the new content can be submitted as a new page), a file over `--max-page-bytes`
    /// `page-too-large`, the rest `unreadable` (retried when it may pass).
    static func failure(_ error: SourceError, limit: Int) -> PageFailure {
        switch error.problem {
        case .changed:
            return PageFailure(stage: "dispatch", code: .sourceChanged,
                               message: error.message + "; not sent. Submit the new content to read it as a new page")
        case .link, .missing:
            return PageFailure(stage: "dispatch", code: .sourceChanged, message: error.message)
        case .tooLarge:
            return PageFailure(stage: "dispatch", code: .pageTooLarge,
                               message: "\(error.path): the page file is larger than the \(limit / (1 << 20)) MB a job may carry")
        case .notRegular, .unreadable(retryable: false):
            return PageFailure(stage: "dispatch", code: .unreadable, message: error.message)
        case .unreadable(retryable: true):
            return PageFailure(stage: "dispatch", code: .unreadable, message: error.message, retryable: true)
        }
    }

    /// Removes the part of a page that is done (its row went in the commit), and its folder with the last part.
    /// Only inside the store's page folder: a part is always written there.
    func removePart(_ part: RawPath) {
        guard part.bytes.starts(with: pageFolder.bytes) else { return }
        FileSystem.remove(part)
        FileSystem.removeEmptyDirectory(part.parent)
    }

    /// The store's page folder (`STORE.pages/`), absolute, where submit writes every part.
    var pageFolder: RawPath {
        let folder = RawPath(store.path + ".pages/")
        return RawPath.currentDirectory.map { folder.absolute(in: $0) } ?? folder
    }

    /// How old a file in the page folder that no row names must be before a coordinator's start removes it: a
    /// `submit` writes a file's parts before the transaction that names them commits, so a young unnamed part may
    /// be one being submitted now.
    static let strayPartSeconds = 3600.0

    /// Removes, at start, the parts no page will read: those of pages that are done (a commit that a kill cut off
    /// before `removePart`, or a result this coordinator did not send the part for), and files in the page folder's
    /// folders that no row names and that are older than `strayPartSeconds`. A submit slower than that between
    /// splitting a file and committing it could lose a part to this; its page is then sent as its whole source
    /// file (`payload`), as a page whose part is missing always is.
    func removeStrayParts() {
        do {
            for part in try store.dropDoneParts() { removePart(part) }
            // File times are the system's, whatever clock this coordinator runs on (a test's).
            let old = Self.files(in: pageFolder, modifiedBefore: Clock.now - Self.strayPartSeconds)
            guard !old.isEmpty else { return }
            // Matched by folder and name: a row holds the path as the submit that wrote it spelled it.
            let named = Set(try store.pathsInPageFolders().map(Self.folderAndName))
            for file in old where !named.contains(Self.folderAndName(file)) { removePart(file) }
        } catch {
            Log.warning("cannot look for page parts left behind", ["store": store.path, "error": "\(error)"])
        }
    }

    /// The regular files in the folders of `pageFolder` (one level down, where submit writes parts) last modified
    /// before `time`. Links, and files in the page folder itself, are not looked at.
    static func files(in pageFolder: RawPath, modifiedBefore time: Double) -> [RawPath] {
        var files: [RawPath] = []
        for name in (try? FileSystem.entries(pageFolder)) ?? [] {
            let folder = pageFolder.appending(name)
            guard (try? FileSystem.status(folder, followLinks: false))?.kind == .directory else { continue }
            for file in ((try? FileSystem.entries(folder)) ?? []).map(folder.appending) {
                if let status = try? FileSystem.status(file, followLinks: false), status.kind == .file,
                   status.modified < time { files.append(file) }
            }
        }
        return files
    }

    /// A path's last two components, "FOLDER/NAME".
    static func folderAndName(_ path: RawPath) -> [UInt8] {
        path.parent.lastComponent + [UInt8(ascii: "/")] + path.lastComponent
    }

    @discardableResult
    func send(_ message: FarmProtocol.Message, to worker: WorkerState) -> Bool {
        do {
            try socket.send([worker.route] + FrameCodec.encode(message))
            worker.lastSent = time.monotonicMilliseconds
            return true
        } catch {
            // The peer is gone (EHOSTUNREACH): liveness will notice and take its leases back.
            Log.debug("send failed", ["worker": worker.id.rawValue, "error": error.description])
            return false
        }
    }
}
