import FarmCore
import FarmRuntime
import Leptonica
import QPDF
import Synchronization

/// One page of one input file.
public struct PageJob: Sendable {
    /// Position of the page in the whole batch, from 0.
    public let sequence: Int
    public let path: String
    /// Page within the file, from 0.
    public let page: Int
    public let pageCount: Int
    public let bytes: [UInt8]
    /// Whether `bytes` are a PDF (the page is rendered) rather than an image file.
    public var isPDF = false
}

/// How one page ended.
public struct PageReport: Sendable {
    public let sequence: Int
    public let path: String
    public let page: Int
    public let pageCount: Int
    public let outcome: Result<RecognizedPage, PageFailure>
    /// Whether the page is a PDF's (its PDF rendering is that page with text added, not a page made by ocrfarm).
    public var isPDF = false
}

/// OCR of local files in this process: one thread and one recognizer per slot, pages handed out in order and
/// reported back in order. Used by `ocrfarm ocr`; the farm's workers use the same stages one page at a time.
public final class LocalBatch: Sendable {
    /// Makes the processor of one slot, on that slot's thread.
    public typealias ProcessorFactory = @Sendable () throws -> PageProcessor

    public let paths: [String]
    public let slots: Int
    /// The one-page documents each page is rendered as (`PageProcessor.process`).
    public let outputs: [OutputFormat]
    public let pageOptions: PageOptions
    /// Largest input file read, in bytes.
    public let maxFileBytes: Int
    private let makeProcessor: ProcessorFactory
    /// Called by a slot with each page before it is read; nil in production (tests make a page stick with it).
    private let beforePage: (@Sendable (PageJob) -> Void)?

    public init(paths: [String], slots: Int, outputs: [OutputFormat] = [], pageOptions: PageOptions = PageOptions(),
                maxFileBytes: Int = 1 << 30, beforePage: (@Sendable (PageJob) -> Void)? = nil,
                makeProcessor: @escaping ProcessorFactory)
    {
        self.beforePage = beforePage
        self.paths = paths
        self.slots = max(1, slots)
        self.outputs = outputs
        self.pageOptions = pageOptions
        self.maxFileBytes = maxFileBytes
        self.makeProcessor = makeProcessor
    }

    private enum Event: Sendable {
        case report(PageReport)
        case allQueued(pages: Int)
        case slotFailed(String)
    }

    /// Runs the batch, calling `report` for every page in input order, on the calling thread.
    /// Throws only when no recognizer could be created at all.
    public func run(_ report: (PageReport) -> Void) throws(PageFailure) {
        let jobs = BlockingQueue<PageJob>(capacity: slots * 2)
        let events = BlockingQueue<Event>()
        let producer = startReader(jobs: jobs, events: events)
        // Pages in a slot with a time limit: sequence -> the page and when the watchdog gives its slot up. A page
        // is either taken out here by its slot when done or by the watchdog, never both.
        let inSlots = PagesInSlots()
        var workers = (0..<slots).map { startSlot($0, jobs: jobs, events: events, inSlots: inSlots) }
        let limit = pageOptions.timeoutMilliseconds
        var order = InputOrder()
        var total: Int?
        var failedSlots: [String] = []
        while total == nil || order.next < total! {
            // With a time limit the watchdog looks at the slots at least every 100 ms.
            let event = events.pop(timeoutMilliseconds: limit.map { _ in 100 })
            if let limit {
                // Nobody waits for a stuck thread: its page fails at once and a new slot takes its place.
                for (slot, failed) in inSlots.expired(limit: limit) {
                    order.received(failed, report)
                    workers[slot].detach()
                    workers[slot] = startSlot(slot, jobs: jobs, events: events, inSlots: inSlots)
                }
            }
            guard let event else {
                if limit == nil { break }
                continue
            }
            switch event {
            case .report(let page):
                order.received(page, report)
            case .allQueued(let pages):
                total = pages
            case .slotFailed(let message):
                failedSlots.append(message)
                if failedSlots.count == slots {
                    jobs.close()
                    producer.join()
                    workers.forEach { $0.join() }
                    throw PageFailure(stage: TesseractRecognizer.stage, code: .ocrFailed, message: message)
                }
            }
        }
        producer.join()
        workers.forEach { $0.join() }
    }

    /// The reader thread: reads the files and queues their pages as jobs, then says how many pages there are.
    /// Sequence numbers follow the input order. Within each window of files, the largest go first: bigger files
    /// usually hold more text, and starting them early keeps the last pages of a batch short, so no slot idles at
    /// the end while another finishes a long page. Results are still reported in input order.
    private func startReader(jobs: BlockingQueue<PageJob>, events: BlockingQueue<Event>) -> NativeThread {
        NativeThread.start(name: "reader") { [self] in
            let window = max(8, slots * 4)
            var sequence = 0
            for start in stride(from: 0, to: paths.count, by: window) {
                var loaded: [LoadedFile] = []
                for index in start..<min(start + window, paths.count) {
                    let file = load(index, first: sequence)
                    loaded.append(file)
                    sequence += file.pages
                }
                for file in loaded.sorted(by: { ((try? $0.bytes.get())?.count ?? 0) > ((try? $1.bytes.get())?.count ?? 0) }) {
                    guard queue(file, jobs: jobs, events: events) else { return }
                }
            }
            jobs.close()
            events.push(.allQueued(pages: sequence))
        }
    }

    /// One input file read: its bytes or why not, its pages (a PDF's by qpdf, an image's frames) and whether it is
    /// a PDF; its first page's sequence number.
    private struct LoadedFile {
        let index: Int
        let bytes: Result<[UInt8], PageFailure>
        let pages: Int
        let first: Int
        let pdf: Bool
    }

    private func load(_ index: Int, first: Int) -> LoadedFile {
        var bytes: Result<[UInt8], PageFailure>
        do throws(FileError) {
            bytes = .success(try FileSystem.read(paths[index], limit: maxFileBytes))
        } catch {
            bytes = .failure(PageFailure(stage: Decoder.stage, code: .unreadable, message: error.reason))
        }
        var pages = 1
        var pdf = false
        if case .success(let read) = bytes {
            if ImageFormat.sniff(read) == .pdf {
                pdf = true
                switch Self.pdfPages(read, name: paths[index]) {
                case .success(let count): pages = count
                case .failure(let failure): bytes = .failure(failure)
                }
            } else {
                pages = Pix.pageCount(of: read)
            }
        }
        return LoadedFile(index: index, bytes: bytes, pages: pages, first: first, pdf: pdf)
    }

    /// Queues the pages of `file` as jobs, or reports why it cannot be read; false when the queue was closed
    /// (every slot failed).
    private func queue(_ file: LoadedFile, jobs: BlockingQueue<PageJob>, events: BlockingQueue<Event>) -> Bool {
        let path = paths[file.index]
        switch file.bytes {
        case .failure(let failure):
            events.push(.report(PageReport(sequence: file.first, path: path, page: 0, pageCount: 1, outcome: .failure(failure))))
        case .success(let bytes):
            for page in 0..<file.pages {
                let job = PageJob(sequence: file.first + page, path: path, page: page, pageCount: file.pages, bytes: bytes,
                                  isPDF: file.pdf)
                guard jobs.push(job) else { return false }
            }
        }
        return true
    }

    /// Slot `index`: makes its processor on its own thread, then reads jobs until the queue closes. A page given up
    /// by the watchdog meanwhile ends the thread: its timeout was reported and another slot took this one's place.
    private func startSlot(_ index: Int, jobs: BlockingQueue<PageJob>, events: BlockingQueue<Event>,
                           inSlots: PagesInSlots) -> NativeThread {
        let limit = pageOptions.timeoutMilliseconds
        return NativeThread.start(name: "slot-\(index)") { [self] in
            let processor: PageProcessor
            do {
                processor = try makeProcessor()
                try processor.prepare(languages: pageOptions.languages)
            } catch let failure as PageFailure {
                events.push(.slotFailed(failure.message))
                return
            } catch {
                events.push(.slotFailed("\(error)"))
                return
            }
            while let job = jobs.pop() {
                if let limit { inSlots.enter(job, slot: index, limit: limit) }
                beforePage?(job)
                let report = process(job, with: processor)
                if limit != nil, !inSlots.leave(job) { return }
                events.push(.report(report))
            }
        }
    }

    /// Reports arrive in any order and are passed on in input order.
    private struct InputOrder {
        private var pending: [Int: PageReport] = [:]
        /// The sequence number of the next page to pass on.
        private(set) var next = 0

        mutating func received(_ page: PageReport, _ report: (PageReport) -> Void) {
            pending[page.sequence] = page
            while let ready = pending.removeValue(forKey: next) {
                report(ready)
                next += 1
            }
        }
    }

    /// A PDF's page count, or why it cannot be read (encrypted, damaged, no pages), naming the file.
    static func pdfPages(_ bytes: [UInt8], name: String) -> Result<Int, PageFailure> {
        do throws(QPDFError) {
            let count = try QPDF.info(bytes: bytes, name: name).pageCount
            guard count > 0 else {
                return .failure(PageFailure(stage: PDFRasterizer.stage, code: .pdfFailed, message: "the PDF has no pages"))
            }
            return .success(count)
        } catch {
            if error.kind == .password {
                return .failure(PageFailure(stage: PDFRasterizer.stage, code: .pdfEncrypted,
                                            message: "the PDF is encrypted and needs a password"))
            }
            return .failure(PageFailure(stage: PDFRasterizer.stage, code: .pdfFailed, message: "cannot open the PDF: \(error.message)"))
        }
    }

    /// Pages in a slot under a time limit, by sequence: the page, its slot, since when and the watchdog's deadline.
    private final class PagesInSlots: Sendable {
        let pages = Mutex<[Int: (job: PageJob, slot: Int, since: Int64, deadline: Int64)]>([:])

        /// A slot takes `job`: its slot is given up `PageWatchdog.marginMilliseconds` after `limit`.
        func enter(_ job: PageJob, slot: Int, limit: Int) {
            let now = Clock.monotonicMilliseconds
            pages.withLock { $0[job.sequence] = (job, slot, now, now + Int64(limit) + PageWatchdog.marginMilliseconds) }
        }

        /// The slot is done with `job`; false when the watchdog gave it up meanwhile.
        func leave(_ job: PageJob) -> Bool {
            pages.withLock { $0.removeValue(forKey: job.sequence) } != nil
        }

        /// Takes out every page past its deadline, each with its slot and its report: failed with `timeout`.
        func expired(limit: Int) -> [(slot: Int, report: PageReport)] {
            let now = Clock.monotonicMilliseconds
            let expired = pages.withLock { pages in
                let expired = pages.filter { now >= $0.value.deadline }
                for sequence in expired.keys { pages.removeValue(forKey: sequence) }
                return Array(expired.values)
            }
            return expired.map { page in
                let job = page.job
                let failure = PageWatchdog.failure(heldMilliseconds: now - page.since, limitMilliseconds: limit)
                return (page.slot, PageReport(sequence: job.sequence, path: job.path, page: job.page, pageCount: job.pageCount,
                                              outcome: .failure(failure)))
            }
        }
    }

    /// Decodes, corrects and recognizes one page; every failure becomes a report, never a crash.
    public func process(_ job: PageJob, with processor: PageProcessor) -> PageReport {
        let outcome: Result<RecognizedPage, PageFailure>
        do throws(PageFailure) {
            let name = job.pageCount > 1 ? "\(job.path) [page \(job.page + 1)]" : job.path
            let source: PageSource = job.isPDF ? .pdf(job.bytes, index: job.page) : .image(job.bytes, index: job.page)
            let page = try processor.process(source, options: pageOptions, outputs: outputs,
                                             sourceName: name)
            outcome = .success(page)
        } catch {
            outcome = .failure(error)
        }
        return PageReport(sequence: job.sequence, path: job.path, page: job.page, pageCount: job.pageCount, outcome: outcome,
                          isPDF: job.isPDF)
    }
}
