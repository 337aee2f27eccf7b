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
        let failure: PageFailure?
        var bytes: [UInt8] = []
        do throws(FileError) {
            // Never a FIFO put where a page was: opening it would block this loop until a writer came. Never a
            // symbolic link either: one put where a submitted file was could point at any file the coordinator
            // may read (its CURVE secret key), which would then be sent out.
            bytes = try FileSystem.read(page.source, limit: configuration.maxPageBytes, regularOnly: true, followLinks: false)
            failure = Self.check(bytes, of: page)
        } catch where error.code == ELOOP {
            failure = PageFailure(stage: "dispatch", code: .sourceChanged,
                                  message: "\(error.path): is a symbolic link now (it was a file when submitted); not read")
        } catch {
            failure = Self.readFailure(error, limit: configuration.maxPageBytes)
        }
        if failure != nil { bytes = [] }
        if let failure {
            worker.credit += 1
            pending.append(.failure(attempt, worker: worker.id, failure: failure, startedAt: leasedAt, outcome: .failed))
            return
        }
        let options = optionsCache[page.optionsJSON] ?? {
            let parsed = PageOptions(json: try? JSON.parse(page.optionsJSON))
            if optionsCache.count > 10_000 { optionsCache.removeAll() }
            optionsCache[page.optionsJSON] = parsed
            return parsed
        }()
        let job = Job(attempt: attempt, source: source, kind: page.kind, index: page.index,
                      options: options, bytes: bytes)
        worker.leases[page.id] = LeaseInfo(attempt: attempt, startedAt: leasedAt)
        if send(.job(job), to: worker) {
            counters.dispatched += 1
            if let waited = worker.creditAnswered() { counters.dispatchWait.record(nanoseconds: waited) }
            if let line = line(PageEvent(.debug, "page leased", attempt, worker.id, final: false)) { Console.error(line) }
        }
    }

    /// The file's bytes against what was submitted: a different size or SHA-256 fails the page as source-changed,
    /// naming both hashes, and no byte of it is sent. The new content can be submitted as a new page.
    static func check(_ bytes: [UInt8], of page: QueuedPage) -> PageFailure? {
        guard let expected = page.sourceHash else { return nil }   // submitted before hashes were recorded
        let size = page.sourceSize ?? bytes.count
        let actual = size == bytes.count ? SHA256.hex(bytes) : nil
        guard actual != expected else { return nil }
        let now = actual.map { "sha256 \($0)" } ?? "\(bytes.count) bytes"
        return PageFailure(stage: "dispatch", code: .sourceChanged,
                           message: "\(page.source): changed since it was submitted (sha256 \(expected), \(size) bytes then; "
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
