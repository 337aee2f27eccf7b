import Crypto
import FarmCore
import FarmProtocol
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
        switch Self.payload(of: page, limit: configuration.maxPageBytes) {
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
        let job = Job(attempt: attempt, source: source, kind: page.kind, index: payload.index,
                      options: options, bytes: payload.bytes, sha256: payload.sha256)
        payload.bytes = []
        worker.leases[page.id] = LeaseInfo(attempt: attempt, startedAt: leasedAt)
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

    /// Reads what to send for `page`, once: its part when it has one (the page alone, split out at submit), else its
    /// source file. Either is opened without following links, only if it is a regular file, and checked against the
    /// size and SHA-256 recorded at submit before a byte leaves; the one read serves the check and the send. A part
    /// that is not there (the page folder was cleaned by hand) falls back to the whole source file, checked as ever.
    static func payload(of page: QueuedPage, limit: Int) -> Result<Payload, PageFailure> {
        if let part = page.part {
            switch read(part.path, hash: part.sha256, size: part.size, limit: limit) {
            case .success(let bytes): return .success(Payload(bytes: bytes, index: 0, sha256: part.sha256, isPart: true))
            case .failure(let problem) where !problem.missing: return .failure(problem.failure)
            case .failure: break
            }
        }
        return read(page.source, hash: page.sourceHash, size: page.sourceSize, limit: limit)
            .map { Payload(bytes: $0, index: page.index, sha256: page.sourceHash, isPart: false) }
            .mapError(\.failure)
    }

    /// Why a page's file was not sent, and whether it is simply not there.
    struct ReadProblem: Error {
        let failure: PageFailure
        var missing = false
    }

    /// One read of a page's file, checked: no link, a regular file, within `limit`, and (when recorded) the size
    /// and SHA-256 it had when it was submitted.
    static func read(_ path: RawPath, hash: String?, size: Int?, limit: Int) -> Result<[UInt8], ReadProblem> {
        do throws(FileError) {
            // Never a FIFO put where a page was: opening it would block this loop until a writer came. Never a
            // symbolic link either: one put where a submitted file was could point at any file the coordinator
            // may read (its CURVE secret key), which would then be sent out.
            let bytes = try FileSystem.read(path, limit: limit, regularOnly: true, followLinks: false)
            if let failure = check(bytes, path: path, hash: hash, size: size) { return .failure(ReadProblem(failure: failure)) }
            return .success(bytes)
        } catch where error.code == ELOOP {
            return .failure(ReadProblem(failure: PageFailure(stage: "dispatch", code: .sourceChanged,
                                        message: "\(error.path): is a symbolic link now (it was a file when submitted); not read")))
        } catch {
            return .failure(ReadProblem(failure: readFailure(error, limit: limit), missing: error.code == ENOENT))
        }
    }

    /// The file's bytes against what was submitted: a different size or SHA-256 fails the page as source-changed,
    /// naming both hashes, and no byte of it is sent. The new content can be submitted as a new page.
    static func check(_ bytes: [UInt8], of page: QueuedPage) -> PageFailure? {
        check(bytes, path: page.source, hash: page.sourceHash, size: page.sourceSize)
    }

    static func check(_ bytes: [UInt8], path: RawPath, hash: String?, size: Int?) -> PageFailure? {
        guard let expected = hash else { return nil }   // submitted before hashes were recorded
        let size = size ?? bytes.count
        let actual = size == bytes.count ? SHA256.hex(bytes) : nil
        guard actual != expected else { return nil }
        let now = actual.map { "sha256 \($0)" } ?? "\(bytes.count) bytes"
        return PageFailure(stage: "dispatch", code: .sourceChanged,
                           message: "\(path): changed since it was submitted (sha256 \(expected), \(size) bytes then; "
                               + "\(now) now); not sent. Submit the new content to read it as a new page")
    }

    static func readFailure(_ error: FileError, limit: Int) -> PageFailure {
        switch error.code {
        case EFBIG:
            return PageFailure(stage: "dispatch", code: .pageTooLarge,
                               message: "\(error.path): the page file is larger than the \(limit / (1 << 20)) MB a job may carry")
        case ENOENT:
            return PageFailure(stage: "dispatch", code: .sourceChanged, message: "\(error.path): the file no longer exists")
        case EACCES, EISDIR, ELOOP, ENOTDIR, EINVAL:
            return PageFailure(stage: "dispatch", code: .unreadable, message: error.description)
        default:
            return PageFailure(stage: "dispatch", code: .unreadable, message: error.description, retryable: true)
        }
    }

    /// Removes the part of a page that is done (its row went in the commit), and its folder with the last part.
    /// Only inside the store's page folder: a part is always written there.
    func removePart(_ part: RawPath) {
        let folder = RawPath(store.path + ".pages/")
        let pageFolder = RawPath.currentDirectory.map { folder.absolute(in: $0) } ?? folder
        guard part.bytes.starts(with: pageFolder.bytes) else { return }
        FileSystem.remove(part)
        FileSystem.removeEmptyDirectory(part.parent)
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
