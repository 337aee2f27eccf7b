import Allocator
import Crypto
import FarmCore
import FarmPipeline
import FarmProtocol
import FarmRuntime
import ZeroMQ

/// A job handed to a slot, tagged with the connection it came on.
struct SlotJob: Sendable {
    let job: Job
    let generation: Int
}

/// What a slot hands the network thread: the RESULT or FAIL already encoded for the wire, with its attempt in a
/// small frame in front. The network thread needs only the attempt (to tell the tracker), so it reads that frame
/// and forwards the rest as it is, instead of decoding the message and encoding it again.
enum SlotOutcome {
    /// `[attempt: page id, attempt number, 8 bytes each, little-endian] + wire frames`.
    static func frames(_ attempt: AttemptID, _ message: FarmProtocol.Message) -> [[UInt8]] {
        var tag: [UInt8] = []
        tag.reserveCapacity(16)
        withUnsafeBytes(of: attempt.page.rawValue.littleEndian) { tag.append(contentsOf: $0) }
        withUnsafeBytes(of: Int64(attempt.number).littleEndian) { tag.append(contentsOf: $0) }
        return [tag] + FrameCodec.encode(message)
    }

    /// The attempt in front and the wire frames after it; nil for anything that is not a slot's outcome.
    static func split(_ frames: [[UInt8]]) -> (attempt: AttemptID, wire: [[UInt8]])? {
        guard frames.count >= 2, frames[0].count == 16 else { return nil }
        func int64(_ offset: Int) -> Int64 {
            frames[0][offset..<offset + 8].reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }
        return (AttemptID(page: PageID(int64(0)), number: Int(int64(8))), Array(frames[1...]))
    }
}

/// One page slot: takes jobs, runs the pipeline, sends the outcome to the network thread.
///
/// A page's time limit covers its whole stay in the slot (`PageWatchdog`): the network thread's watchdog gives up
/// a slot still inside a page past its deadline (`JobTracker.expire`) and starts another in its place. The slot given up finds
/// out when the page is done at last: it throws the outcome away and its thread ends, freeing its engine.
struct Slot {
    let index: Int
    let processor: PageProcessor
    let socket: Socket
    let jobs: BlockingQueue<SlotJob>
    let tracker: JobTracker
    let time: any TimeSource
    /// The process this slot's pages are read in; nil: read in this thread.
    let pageProcess: PageProcess?
    /// Called with each job before its page is read (tests use it to make a page crash its worker); nil in production.
    let beforePage: (@Sendable (Job) -> Void)?

    /// How a slot's loop ended.
    enum End: Equatable {
        /// No more jobs: the worker is stopping.
        case closed
        /// The watchdog gave this slot up while it was in a page; another slot has taken its place.
        case givenUp
    }

    func run() -> End {
        while let item = jobs.pop() {
            var job = item.job
            let now = time.monotonicMilliseconds
            let deadline = job.options.timeoutMilliseconds.map { now + Int64($0) + PageWatchdog.marginMilliseconds }
            guard tracker.start(job.attempt, slot: index, now: now, deadline: deadline,
                                limit: job.options.timeoutMilliseconds) else { continue }
            beforePage?(job)
            let started = Clock.monotonicMilliseconds
            // In a page process of its own when the worker has one (`PageProcess`): a library that runs out of
            // memory and aborts ends that process, not the worker.
            let message: FarmProtocol.Message
            if let pageProcess { message = pageProcess.read(&job) } else { message = Self.read(&job, processor: processor) }
            guard tracker.settle(job.attempt) else {
                // Too late: the timeout was reported and a new slot took this one's place.
                Log.write(.info, "page finished in a slot given up; outcome discarded", fields: Self.fields(job, since: started))
                Allocator.releaseThreadMemory()
                return .givenUp
            }
            _ = try? socket.send(SlotOutcome.frames(job.attempt, message))
            pageProcess?.restartIfEnded()
            // The page's buffers go back to the system between pages, not while the engine churns through them.
            if processor.engine != .none { Allocator.releaseThreadMemory() }
        }
        return .closed
    }

    /// Reads the job's page with `processor`: the RESULT or FAIL for it. The page's bytes are let go as soon as the
    /// processor has them.
    static func read(_ job: inout Job, processor: PageProcessor) -> FarmProtocol.Message {
        let message: FarmProtocol.Message
        let started = Clock.monotonicMilliseconds
        do throws(PageFailure) {
            // What arrived is what the coordinator checked against the file as submitted, or the page is not read.
            if let expected = job.sha256, case let actual = SHA256.hex(job.bytes), actual != expected {
                throw PageFailure(stage: "receive", code: .jobCorrupted, message: "\(job.source): the page's \(job.bytes.count) bytes "
                                      + "arrived with sha256 \(actual), sent with sha256 \(expected); not read", retryable: true)
            }
            let source: PageSource = job.kind == .pdf ? .pdf(job.bytes, index: job.index) : .image(job.bytes, index: job.index)
            // The encoded page is needed only until it is decoded; the processor holds the last reference.
            job.bytes = []
            // The renderings the store keeps (the processor renders none for the null engine: nothing was read).
            let page = try processor.process(source, options: job.options, outputs: job.options.outputs,
                                             sourceName: job.source)
            let result = page.result
            // The whole reading goes with the result as the page's model (render on demand, issue 19): the store
            // keeps it once, and renders hOCR, ALTO, PAGE and JSON from it; the structure is its page-level part.
            let model = PageModel(result: result, context: RenderContext(
                source: job.source, page: job.index + 1, languages: job.options.languages, created: Clock.now,
                creator: PageProcessor.documentCreator(of: result).version))
            message = .result(ResultMessage(
                attempt: job.attempt, engine: result.engine ?? processor.engineName, meanConfidence: result.meanConfidence,
                width: result.width, height: result.height, timings: result.timings,
                text: Array(result.text.utf8), structure: result.summaryJSON.bytes,
                artifacts: page.renderings.map { ($0.format.rawValue, $0.bytes) } + [("model", model.json.bytes)]))
            if Log.level == .debug { Log.write(.debug, "page read", fields: fields(job, since: started)) }
        } catch {
            message = .fail(FailMessage(attempt: job.attempt, failure: error))
            Log.write(.info, "page failed", fields: fields(job, since: started)
                      + [("code", error.code.rawValue), ("stage", error.stage), ("error", error.message)])
        }
        return message
    }

    /// A page event's fields (the worker's id comes from the log's context).
    static func fields(_ job: Job, since started: Int64) -> [(String, String)] {
        [("page", job.attempt.page.description), ("attempt", String(job.attempt.number)), ("source", job.source),
         ("duration_ms", String(Clock.monotonicMilliseconds - started))]
    }
}
