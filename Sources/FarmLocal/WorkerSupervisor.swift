import FarmCore
import FarmRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Worker processes kept running the way a supervisor would: one that exits (a crashing page, the OOM killer) is
/// replaced; its pages come back to the queue when the coordinator notices it is gone.
public final class WorkerSupervisor {
    public let executable: String
    public let arguments: [String]
    /// Where the workers' output goes (appended).
    public let logPath: String
    /// Replacements allowed in all before the supervisor gives up.
    public let restartLimit: Int
    public private(set) var restarts = 0
    private var children: [ChildProcess] = []

    /// Why the supervisor gave up.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let lastStatus: Int32
        public var description: String { "workers keep exiting (last status \(lastStatus))" }
    }

    /// Starts `count` workers: `executable arguments…`, output to `logPath`.
    public init(count: Int, executable: String, arguments: [String], logPath: String, restartLimit: Int) throws {
        self.executable = executable
        self.arguments = arguments
        self.logPath = logPath
        self.restartLimit = restartLimit
        for _ in 0..<count { children.append(try start()) }
    }

    private func start() throws -> ChildProcess {
        try ChildProcess(executable: executable, arguments: arguments, outputPath: logPath)
    }

    /// Replaces every worker that has exited since the last call; throws once more than `restartLimit` were replaced.
    /// A worker that left with 75 (`tryAgain`: too many slots stuck past their pages' time limit) is replaced without
    /// counting: it left in order, and its pages made progress (they failed with `timeout`).
    public func replaceExited() throws {
        for index in children.indices {
            guard let status = children[index].poll() else { continue }
            if status == ExitStatus.tryAgain.rawValue {
                Log.info("worker left with stuck slots; starting another", ["pid": String(children[index].pid)])
                children[index] = try start()
                continue
            }
            restarts += 1
            if restarts > restartLimit { throw Failure(lastStatus: status) }
            Log.warning("worker exited; starting another", ["pid": String(children[index].pid), "exit_status": String(status),
                                                           "restarts": String(restarts)])
            children[index] = try start()
        }
    }

    /// SIGTERM to every worker (they finish the page in hand within their grace period), SIGKILL to any still
    /// running after `graceMilliseconds`.
    public func stop(graceMilliseconds: Int = 10_000) {
        for child in children { child.signal(SIGTERM) }
        for child in children where child.wait(milliseconds: graceMilliseconds) == nil {
            child.signal(SIGKILL)
            child.wait()
        }
        children = []
    }

    deinit { stop() }
}
