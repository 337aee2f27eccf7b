import FarmCore
import Leptonica

/// One page of one input file.
public struct PageJob: Sendable {
    /// Position of the page in the whole batch, from 0.
    public let sequence: Int
    public let path: String
    /// Page within the file, from 0.
    public let page: Int
    public let pageCount: Int
    public let bytes: [UInt8]
}

/// How one page ended.
public struct PageReport: Sendable {
    public let sequence: Int
    public let path: String
    public let page: Int
    public let pageCount: Int
    public let outcome: Result<RecognizedPage, PageFailure>
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

    public init(paths: [String], slots: Int, outputs: [OutputFormat] = [], pageOptions: PageOptions = PageOptions(),
                maxFileBytes: Int = 1 << 30, makeProcessor: @escaping ProcessorFactory)
    {
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
                var loaded: [(index: Int, bytes: Result<[UInt8], FileError>, pages: Int, first: Int)] = []
                for index in indices {
                    let bytes: Result<[UInt8], FileError>
                    do throws(FileError) {
                        bytes = .success(try FileSystem.read(paths[index], limit: maxFileBytes))
                    } catch {
                        bytes = .failure(error)
                    }
                    let pages = (try? bytes.get()).map { Pix.pageCount(of: $0) } ?? 1
                    loaded.append((index, bytes, pages, sequence))
                    sequence += pages
                }
                for file in loaded.sorted(by: { ((try? $0.bytes.get())?.count ?? 0) > ((try? $1.bytes.get())?.count ?? 0) }) {
                    let path = paths[file.index]
                    switch file.bytes {
                    case .failure(let error):
                        let failure = PageFailure(stage: Decoder.stage, code: .unreadable, message: error.reason)
                        events.push(.report(PageReport(sequence: file.first, path: path, page: 0, pageCount: 1,
                                                       outcome: .failure(failure))))
                    case .success(let bytes):
                        for page in 0..<file.pages {
                            let job = PageJob(sequence: file.first + page, path: path, page: page, pageCount: file.pages,
                                              bytes: bytes)
                            guard jobs.push(job) else { return }
                        }
                    }
                }
            }
            jobs.close()
            events.push(.allQueued(pages: sequence))
        }

        let workers = (0..<slots).map { index in
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
                    events.push(.report(process(job, with: processor)))
                }
            }
        }

        var pending: [Int: PageReport] = [:]
        var next = 0
        var total: Int?
        var failedSlots: [String] = []
        while total == nil || next < total! {
            guard let event = events.pop() else { break }
            switch event {
            case .report(let page):
                pending[page.sequence] = page
                while let ready = pending.removeValue(forKey: next) {
                    report(ready)
                    next += 1
                }
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

    /// Decodes, corrects and recognizes one page; every failure becomes a report, never a crash.
    public func process(_ job: PageJob, with processor: PageProcessor) -> PageReport {
        let outcome: Result<RecognizedPage, PageFailure>
        do throws(PageFailure) {
            let name = job.pageCount > 1 ? "\(job.path) [page \(job.page + 1)]" : job.path
            let page = try processor.process(.image(job.bytes, index: job.page), options: pageOptions, outputs: outputs,
                                             sourceName: name)
            outcome = .success(page)
        } catch {
            outcome = .failure(error)
        }
        return PageReport(sequence: job.sequence, path: job.path, page: job.page, pageCount: job.pageCount, outcome: outcome)
    }
}
