import FarmCore
import Leptonica
import QPDF
import Synchronization

/// A page's time limit covers its whole stay in a slot, not only recognition. Recognition stops itself at the
/// limit; decoding and the correction stages cannot be interrupted, so a watchdog gives up a slot still in its page
/// `margin` after the limit: the page fails with `timeout` at once, a new slot (a new engine) takes the place of the
/// old one, whose thread ends when its stage does, its outcome thrown away. Used by workers and `LocalBatch`.
public enum PageWatchdog {
    /// Past the limit, recognition's own stop gets this long to report the timeout, cheaper than a new slot.
    public static let marginMilliseconds: Int64 = 300

    /// The failure of a page whose slot was given up after `held` milliseconds, for a limit of `limit`.
    public static func failure(heldMilliseconds held: Int64, limitMilliseconds limit: Int) -> PageFailure {
        PageFailure(stage: "page", code: .timeout,
                    message: "the page was still being read after \(held) ms, past its time limit of \(limit) ms, "
                        + "in a stage that cannot be stopped; its slot was given up", retryable: true)
    }
}

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

        let producer = NativeThread.start(name: "reader") { [self] in
            // Sequence numbers follow the input order. Within each window of files, the largest go first: bigger
            // files usually hold more text, and starting them early keeps the last pages of a batch short, so no
            // slot idles at the end while another finishes a long page. Results are still reported in input order.
            let window = max(8, slots * 4)
            var sequence = 0
            for start in stride(from: 0, to: paths.count, by: window) {
                let indices = Array(start..<min(start + window, paths.count))
                var loaded: [(index: Int, bytes: Result<[UInt8], PageFailure>, pages: Int, first: Int, pdf: Bool)] = []
                for index in indices {
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
                    loaded.append((index, bytes, pages, sequence, pdf))
                    sequence += pages
                }
                for file in loaded.sorted(by: { ((try? $0.bytes.get())?.count ?? 0) > ((try? $1.bytes.get())?.count ?? 0) }) {
                    let path = paths[file.index]
                    switch file.bytes {
                    case .failure(let failure):
                        events.push(.report(PageReport(sequence: file.first, path: path, page: 0, pageCount: 1,
                                                       outcome: .failure(failure))))
                    case .success(let bytes):
                        for page in 0..<file.pages {
                            let job = PageJob(sequence: file.first + page, path: path, page: page, pageCount: file.pages,
                                              bytes: bytes, isPDF: file.pdf)
                            guard jobs.push(job) else { return }
                        }
                    }
                }
            }
            jobs.close()
            events.push(.allQueued(pages: sequence))
        }

        // Pages in a slot with a time limit: sequence -> the page and when the watchdog gives its slot up. A page
        // is either taken out here by its slot when done or by the watchdog, never both.
        let inSlots = PagesInSlots()
        let limit = pageOptions.timeoutMilliseconds
        func startSlot(_ index: Int) -> NativeThread {
            NativeThread.start(name: "slot-\(index)") { [self] in
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
                    if let limit {
                        let now = Clock.monotonicMilliseconds
                        inSlots.pages.withLock {
                            $0[job.sequence] = (job, index, now, now + Int64(limit) + PageWatchdog.marginMilliseconds)
                        }
                    }
                    beforePage?(job)
                    let report = process(job, with: processor)
                    // Given up meanwhile: its timeout was reported and another slot took this one's place.
                    if limit != nil, inSlots.pages.withLock({ $0.removeValue(forKey: job.sequence) }) == nil { return }
                    events.push(.report(report))
                }
            }
        }
        var workers = (0..<slots).map { startSlot($0) }

        var pending: [Int: PageReport] = [:]
        var next = 0
        var total: Int?
        var failedSlots: [String] = []
        func received(_ page: PageReport) {
            pending[page.sequence] = page
            while let ready = pending.removeValue(forKey: next) {
                report(ready)
                next += 1
            }
        }
        /// Fails every page past its deadline at once and replaces its slot; nobody waits for the stuck thread.
        func watch(_ limit: Int) {
            let now = Clock.monotonicMilliseconds
            let expired = inSlots.pages.withLock { pages in
                let expired = pages.filter { now >= $0.value.deadline }
                for sequence in expired.keys { pages.removeValue(forKey: sequence) }
                return Array(expired.values)
            }
            for page in expired {
                let job = page.job
                received(PageReport(sequence: job.sequence, path: job.path, page: job.page, pageCount: job.pageCount,
                                    outcome: .failure(PageWatchdog.failure(heldMilliseconds: now - page.since,
                                                                           limitMilliseconds: limit))))
                workers[page.slot].detach()
                workers[page.slot] = startSlot(page.slot)
            }
        }
        while total == nil || next < total! {
            // With a time limit the watchdog looks at the slots at least every 100 ms.
            let event = events.pop(timeoutMilliseconds: limit.map { _ in 100 })
            if let limit { watch(limit) }
            guard let event else {
                if limit == nil { break }
                continue
            }
            switch event {
            case .report(let page):
                received(page)
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
