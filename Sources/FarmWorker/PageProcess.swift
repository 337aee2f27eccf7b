import Allocator
import FarmCore
import FarmPipeline
import FarmProtocol
import FarmRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How a worker starts the process a slot reads its pages in: this program with these arguments (`ocrfarm worker
/// --page-reader …`), which serves `PageReader.serve` on descriptors 3 (jobs in) and 4 (outcomes out).
public struct PageProcessLaunch: Sendable {
    public var executable: String
    public var arguments: [String]

    public init(executable: String, arguments: [String]) {
        self.executable = executable
        self.arguments = arguments
    }
}

/// The process one slot reads its pages in (issue 37). A C library that cannot allocate (Tesseract's
/// `std::bad_alloc` ends in `abort`; Swift traps on a failed allocation; the kernel's OOM killer under a cgroup
/// limit) ends this process and fails its one page as `out-of-memory`, logged; the worker, its connection and its
/// other pages go on, and the next page gets a new process.
///
/// Owns the child and the three pipes to it (closed in `deinit`, which ends an idle child: it reads end of file).
/// Used by its slot's thread only.
public final class PageProcess {
    let launch: PageProcessLaunch
    private var child: ChildProcess?
    private var toChild: Int32 = -1
    private var fromChild: Int32 = -1
    private var errors: Int32 = -1
    /// The child's last lines on standard error that were not log lines (a library's dying words), newest last.
    private var noise: [String] = []
    /// The first line of that output since the page began that says an allocation failed.
    private var allocationFailure: String?
    private var pendingError: [UInt8] = []

    public init(launch: PageProcessLaunch) {
        self.launch = launch
    }

    /// Starts the child and waits until its engine is loaded; throws what it said when it could not start.
    public func start() throws(WorkerError) {
        stop()
        let (jobs, outcomes, stderr) = try Self.spawning.withLock { _ throws(WorkerError) in
            var pipes: [(read: Int32, write: Int32)] = []
            for _ in 0..<3 {
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else { throw WorkerError("page process: pipe: \(String(cString: strerror(errno)))") }
                // Numbers above the child's 0–4, so each dup2 in the child makes a descriptor without close-on-exec.
                pipes.append((Self.above(fds[0]), Self.above(fds[1])))
            }
            let (jobs, outcomes, stderr) = (pipes[0], pipes[1], pipes[2])
            do {
                child = try ChildProcess(executable: launch.executable, arguments: launch.arguments,
                                         descriptors: [(stderr.write, 2), (jobs.read, 3), (outcomes.write, 4)])
            } catch {
                for pair in pipes { close(pair.read); close(pair.write) }
                throw WorkerError("page process: cannot start \(launch.executable): \(error)")
            }
            return (jobs, outcomes, stderr)
        }
        close(jobs.read)
        close(outcomes.write)
        close(stderr.write)
        (toChild, fromChild, errors) = (jobs.write, outcomes.read, stderr.read)
        noise = []
        // The child says it is ready (a HEARTBEAT) once its engine is loaded, or ends saying why not.
        guard let frames = receive(), case .heartbeat? = try? FrameCodec.decode(frames) else {
            let said = noise.suffix(3).joined(separator: "; ")
            let status = ended()
            throw WorkerError("page process could not start (\(Self.describe(status)))" + (said.isEmpty ? "" : ": \(said)"))
        }
    }

    /// Starts a new child if the last one ended (after its page's outcome is sent, so the next page does not wait
    /// for an engine to load); a child that cannot start is logged, and the next page tries again.
    func restartIfEnded() {
        guard child == nil else { return }
        do {
            try start()
        } catch {
            Log.warning("cannot start a page process; the next page tries again", ["error": error.message])
        }
    }

    /// Reads the job's page in the child: its RESULT or FAIL, or, when the child dies in the page, a FAIL saying
    /// how (`out-of-memory` when an allocation failed or the kernel killed it, else `worker-lost`). A new child is
    /// started for the next page.
    func read(_ job: inout Job) -> FarmProtocol.Message {
        let started = Clock.monotonicMilliseconds
        if let child, let status = child.poll() {
            // Ended while it had no page (killed, or out of memory while idle): this page is not to blame.
            Log.warning("a page process ended between pages; starting another", ["status": Self.describe(status)])
            self.child = nil
            closePipes()
        }
        if child == nil {
            do {
                try start()
            } catch {
                return fail(job, PageFailure(stage: "read", code: .internalError, message: error.message, retryable: true),
                            since: started)
            }
        }
        noise = []
        allocationFailure = nil
        let sent = PipeFrames.write(FrameCodec.encode(.job(job)), to: toChild)
        job.bytes = []
        if sent, let frames = receive() {
            // Only this page's outcome is passed on.
            switch try? FrameCodec.decode(frames) {
            case .result(let result)? where result.attempt == job.attempt: return .result(result)
            case .fail(let failure)? where failure.attempt == job.attempt:
                // A process that ran out of memory may keep its heap scattered (jemalloc retains address space): the
                // next page gets a fresh one. Without this the page's third try on one process failed at once in
                // decoding under the limit.
                if failure.failure.code == .outOfMemory { stop() }
                return .fail(failure)
            default: break
            }
            stop()
            return fail(job, PageFailure(stage: "read", code: .internalError, message: "the page process sent an unreadable reply",
                                         retryable: true), since: started)
        }
        let status = ended()
        // Its last words (a crash report, a library's message) go to the worker's log as they were written, after
        // the page's line: the worker's own standard error used to carry them when the worker itself died.
        let message = fail(job, Self.failure(status: status, noise: noise, allocationFailure: allocationFailure), since: started)
        if !noise.isEmpty { Console.error(noise.joined(separator: "\n")) }
        return message
    }

    private func fail(_ job: Job, _ failure: PageFailure, since started: Int64) -> FarmProtocol.Message {
        Log.write(.warning, "page failed", fields: Slot.fields(job, since: started)
                  + [("code", failure.code.rawValue), ("stage", failure.stage), ("error", failure.message)])
        return .fail(FailMessage(attempt: job.attempt, failure: failure))
    }

    /// The failure of a page whose process ended with `status` (128 + signal), having said `noise` last, and
    /// `allocationFailure` where it said an allocation failed.
    static func failure(status: Int32, noise: [String], allocationFailure: String?) -> PageFailure {
        if allocationFailure != nil || status == 128 + SIGKILL {
            let why = allocationFailure.map { "an allocation failed (\($0))" }
                ?? "it was killed (SIGKILL: the kernel's OOM killer at a cgroup limit, or an operator)"
            return PageFailure(stage: "read", code: .outOfMemory,
                               message: "out of memory: the process reading the page ended (\(describe(status))): \(why)"
                                   + "; memory limits: \(MemoryLimits.current().description)", retryable: true)
        }
        let said = noise.suffix(4).joined(separator: "; ")
        return PageFailure(stage: "read", code: .workerLost, message: "the process reading the page ended (\(describe(status)))"
                               + (said.isEmpty ? "" : "; it said: \(said)"), retryable: true)
    }

    /// Whether a line of a dying process says an allocation failed: libstdc++'s `std::bad_alloc` (Tesseract),
    /// Swift's runtime, glibc's and Leptonica's words for it.
    static func saysAllocationFailed(_ line: String) -> Bool {
        let lower = line.lowercased()
        return lower.contains("bad_alloc") || lower.contains("could not allocate") || lower.contains("cannot allocate")
            || lower.contains("alloc fail") || lower.contains("out of memory")
    }

    static func describe(_ status: Int32) -> String {
        guard status > 128 else { return "exit status \(status)" }
        let signal = status - 128
        let names: [Int32: String] = [SIGABRT: "SIGABRT", SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS",
                                      SIGTRAP: "SIGTRAP", SIGILL: "SIGILL", SIGTERM: "SIGTERM"]
        return "signal \(signal)" + (names[signal].map { " \($0)" } ?? "")
    }

    /// One message from the child, passing on its log lines and keeping its other output while waiting; nil when it
    /// ended (or broke the framing).
    private func receive() -> [[UInt8]]? {
        var fds = [pollfd(fd: fromChild, events: Int16(POLLIN), revents: 0), pollfd(fd: errors, events: Int16(POLLIN), revents: 0)]
        while true {
            let rc = poll(&fds, nfds_t(fds.count), -1)
            if rc < 0 && errno == EINTR { continue }
            guard rc > 0 else { return nil }
            if fds[1].fd >= 0 && fds[1].revents != 0 {
                if !drainErrors() { fds[1].fd = -1 }
            }
            if fds[0].revents != 0 {
                let frames = PipeFrames.read(from: fromChild)
                if frames == nil { while drainErrors() {} }
                return frames
            }
        }
    }

    /// Reads what the child wrote on standard error: our own log lines go to the worker's log as they are, anything
    /// else (a library's) is kept. False at end of file.
    private func drainErrors() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 8192)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(errors, $0.baseAddress, $0.count) }
        guard count > 0 else { return count < 0 && errno == EINTR }
        pendingError += buffer[..<count]
        while let newline = pendingError.firstIndex(of: 10) {
            let line = String(decoding: pendingError[..<newline], as: UTF8.self)
            pendingError.removeSubrange(...newline)
            if line.hasPrefix("time=") || line.hasPrefix("{\"time\"") {
                Console.error(line)
            } else if !line.isEmpty {
                if allocationFailure == nil && Self.saysAllocationFailed(line) { allocationFailure = String(line.prefix(200)) }
                noise.append(line)
                if noise.count > 200 { noise.removeFirst() }
            }
        }
        return true
    }

    /// Waits for the child that stopped answering; its exit status (128 + signal). The pipes are closed.
    private func ended() -> Int32 {
        if !pendingError.isEmpty { noise.append(String(decoding: pendingError, as: UTF8.self)); pendingError = [] }
        let status = child?.wait(milliseconds: 5000) ?? {
            child?.signal(SIGKILL)
            return child?.wait() ?? 0
        }()
        child = nil
        closePipes()
        return status
    }

    private func closePipes() {
        for fd in [toChild, fromChild, errors] where fd >= 0 { close(fd) }
        (toChild, fromChild, errors) = (-1, -1, -1)
    }

    /// Ends the child: closing its input ends an idle one; one still busy is killed after a moment.
    public func stop() {
        guard let child else { return }
        closePipes()
        if child.wait(milliseconds: 2000) == nil {
            child.signal(SIGKILL)
            child.wait()
        }
        self.child = nil
    }

    deinit { stop() }

    /// Held from making a child's pipes until it is started: another slot's child must not inherit them (Glibc has
    /// no `pipe2` for Swift, so close-on-exec is set after `pipe`), or a dead child's outcome pipe would never end.
    private static let spawning = Mutex(())

    /// `fd`, close-on-exec, at 10 or above.
    private static func above(_ fd: Int32) -> Int32 {
        guard fd < 10 else {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return fd
        }
        let moved = fcntl(fd, F_DUPFD_CLOEXEC, 10)
        close(fd)
        return moved
    }
}

/// The child's side: reads JOBs from descriptor 3 and writes each page's RESULT or FAIL to descriptor 4, until the
/// worker closes its end.
public enum PageReader {
    public static func serve(processor: PageProcessor, input: Int32 = 3, output: Int32 = 4) -> ExitStatus {
        guard PipeFrames.write(FrameCodec.encode(.heartbeat), to: output) else { return .ioError }
        while let frames = PipeFrames.read(from: input) {
            guard case .job(var job)? = try? FrameCodec.decode(frames) else { return .software }
            let message = Slot.read(&job, processor: processor)
            guard PipeFrames.write(FrameCodec.encode(message), to: output) else { return .ioError }
            if processor.engine != .none { Allocator.releaseThreadMemory() }
        }
        return .success
    }
}

/// Messages on a pipe: a frame count, then each frame's length and bytes (32-bit little-endian numbers).
enum PipeFrames {
    static let maxFrames = 4096
    static let maxFrameBytes = 1 << 31 - 1

    static func write(_ frames: [[UInt8]], to fd: Int32) -> Bool {
        var head: [UInt8] = []
        func append(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { head.append(contentsOf: $0) } }
        append(frames.count)
        for frame in frames {
            append(frame.count)
            guard writeAll(fd, head) else { return false }
            head = []
            guard writeAll(fd, frame) else { return false }
        }
        return head.isEmpty || writeAll(fd, head)
    }

    static func read(from fd: Int32) -> [[UInt8]]? {
        guard let count = number(fd), count <= maxFrames else { return nil }
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        for _ in 0..<count {
            guard let length = number(fd), length <= maxFrameBytes, let frame = exactly(length, from: fd) else { return nil }
            frames.append(frame)
        }
        return frames
    }

    private static func number(_ fd: Int32) -> Int? {
        guard let bytes = exactly(4, from: fd) else { return nil }
        return bytes.reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    private static func exactly(_ count: Int, from fd: Int32) -> [UInt8]? {
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, filled in
            filled = 0
            while filled < count {
                let got = Glibc.read(fd, buffer.baseAddress! + filled, count - filled)
                if got < 0 && errno == EINTR { continue }
                if got <= 0 { failed = true; return }
                filled += got
            }
        }
        return failed ? nil : bytes
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let wrote = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if wrote < 0 && errno == EINTR { continue }
                if wrote <= 0 { return false }
                offset += wrote
            }
            return true
        }
    }
}
