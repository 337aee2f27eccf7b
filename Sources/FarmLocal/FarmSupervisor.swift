import FarmCoordinator
import FarmCore
import FarmRuntime
import FarmStore
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// How `ocrfarm run` and `ocrfarm watch` start the farm on this machine.
public struct LocalFarmSettings: Sendable {
    public var storePath: String
    /// Worker processes, and the pages each reads at once (`worker --slots`).
    public var workers: Int
    public var slots: Int
    /// The workers' `--engine` and `--lang`.
    public var engine: String
    public var languages: [String]
    public var maxAttempts: Int
    public var retryDelay: Double
    public var heartbeatMilliseconds: Int
    /// Further worker options passed on as given (`--max-pixels`, `--page-memory`, `--log-level`, `--log-format`).
    public var workerOptions: [String]
    /// The program the workers run (this binary, as `EXECUTABLE worker …`).
    public var executable: String

    public init(storePath: String, workers: Int, slots: Int, engine: String, languages: [String], maxAttempts: Int,
                retryDelay: Double, heartbeatMilliseconds: Int, workerOptions: [String] = [],
                executable: String = FileSystem.executablePath)
    {
        self.storePath = storePath
        self.workers = workers
        self.slots = slots
        self.engine = engine
        self.languages = languages
        self.maxAttempts = maxAttempts
        self.retryDelay = retryDelay
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.workerOptions = workerOptions
        self.executable = executable
    }

    /// Where the workers' output goes: `STORE.log`.
    public var logPath: String { storePath + ".log" }
}

/// Why the farm on this machine cannot go on: the workers keep exiting, or the coordinator's loop ended.
public struct LocalFarmFailure: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// The loop `ocrfarm run` and `ocrfarm watch` share: an embedded coordinator (`EmbeddedFarm`) and local worker
/// processes (`WorkerSupervisor`, output to `STORE.log`) kept running while the command does its own step each
/// turn, until the step says it is finished or a signal (`Shutdown`) asks to stop.
///
/// Owns the coordinator's thread and the worker processes; `stop` (or deinit) ends the workers first, then the
/// coordinator. Without settings it runs no farm, only the steps (`watch --no-workers`: a coordinator elsewhere
/// reads the pages). Confined to the thread that made it.
public final class FarmSupervisor {
    /// What a command's step says at the end of a turn.
    public enum Step: Sendable { case goOn, finished }

    private let farm: (coordinator: EmbeddedFarm, workers: WorkerSupervisor)?
    /// Where the workers' output goes (named in failures).
    public let logPath: String?

    /// Starts the coordinator on loopback and `settings.workers` worker processes connected to it; nil settings
    /// start nothing. Throws `EmbeddedFarmError` when the coordinator cannot start, the process error when a
    /// worker cannot.
    public init(starting settings: LocalFarmSettings?) throws {
        guard let settings else {
            farm = nil
            logPath = nil
            return
        }
        let context = try Context()
        var configuration = CoordinatorConfiguration(bind: "tcp://127.0.0.1:*", heartbeatMilliseconds: settings.heartbeatMilliseconds)
        configuration.retry.maxAttempts = settings.maxAttempts
        configuration.retry.baseDelay = settings.retryDelay
        let coordinator = try EmbeddedFarm(storePath: settings.storePath, context: context, configuration: configuration)
        let arguments = ["worker", "--connect", coordinator.endpoint, "--slots", String(settings.slots),
                         "--engine", settings.engine, "--lang", settings.languages.joined(separator: "+"),
                         "--parent", String(getpid()), "--grace", "5", "--heartbeat", String(settings.heartbeatMilliseconds)]
            + settings.workerOptions
        do {
            let workers = try WorkerSupervisor(count: settings.workers, executable: settings.executable, arguments: arguments,
                                               logPath: settings.logPath, restartLimit: settings.workers * 20)
            farm = (coordinator, workers)
        } catch {
            coordinator.stop()
            throw error
        }
        logPath = settings.logPath
    }

    /// Whether a coordinator and workers run here.
    public var runsFarm: Bool { farm != nil }

    /// The embedded coordinator's counters (free to read: no store query); zero without a farm.
    public var counters: CoordinatorCounters { farm?.coordinator.counters ?? CoordinatorCounters() }

    /// Runs `step` until it returns `.finished` or a signal asks to stop; after each turn that goes on, replaces the
    /// workers that exited and checks the coordinator, then pauses `pauseMilliseconds`. Returns whether a signal
    /// ended it. Throws what `step` throws, and `LocalFarmFailure` when the farm cannot go on.
    public func supervise(pauseMilliseconds: Int, _ step: () throws -> Step) throws -> Bool {
        while Shutdown.requested == nil {
            if try step() == .finished { break }
            try check()
            if pauseMilliseconds > 0 { Clock.sleep(milliseconds: pauseMilliseconds) }
        }
        return Shutdown.requested != nil
    }

    /// A worker that died (a crashing page, the OOM killer) is replaced; too many replacements, or a coordinator
    /// whose loop ended, end the farm.
    public func check() throws(LocalFarmFailure) {
        guard let farm else { return }
        do {
            try farm.workers.replaceExited()
        } catch {
            throw LocalFarmFailure(description: "\(error); see \(logPath ?? "the log")")
        }
        if farm.coordinator.failed {
            throw LocalFarmFailure(description: "the coordinator stopped: \(farm.coordinator.failure ?? "")")
        }
    }

    /// Stops in order and returns the pages being read that were given back to the queue. Workers first: each
    /// finishes or hands back the page in hand within `graceMilliseconds`, and the coordinator records what they
    /// send before it stops. Whatever lease is left then is nobody's (the caller holds the store's coordinator
    /// lock), so it goes back to the queue now rather than at the next start.
    public func stop(givingBackLeasesOf store: Store, graceMilliseconds: Int = 8000) -> Int {
        guard let farm else { return 0 }
        farm.workers.stop(graceMilliseconds: graceMilliseconds)
        farm.coordinator.stop()
        return (try? store.recoverLeases()) ?? 0
    }

    /// Stops the workers (SIGTERM, SIGKILL after their grace), then the coordinator. Calling it again does nothing.
    public func stop() {
        farm?.workers.stop()
        farm?.coordinator.stop()
    }

    deinit { stop() }
}
