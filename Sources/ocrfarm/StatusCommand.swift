import FarmCore
import FarmStore

/// `ocrfarm status`: what the farm is doing.
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = "Show pages by state, throughput, failures and workers."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--json", "Print JSON with stable keys instead of text."),
    ]
    static let discussion = """
    Reads the store without blocking the coordinator. JSON keys: store, documents, pages{total, queued, leased,
    done, failed}, throughput{last_minute, overall} (pages/s), failures[{code, count}], workers[{id, host, pid,
    slots, engine, state, pages_done, pages_failed, last_seen, seconds_since_seen}], coordinator{…counters}.
    """

    let storePath: String
    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "status takes no arguments") }
        storePath = StoreOption.path(arguments)
        json = arguments.flag("--json")
    }

    func run() throws -> ExitStatus {
        let store: Store
        do {
            store = try Store(path: storePath, readOnly: true)
        } catch let error as StoreError {
            throw CommandFailure(.noInput, error.message)
        }
        let now = Clock.now
        let status = try store.status(now: now)
        let counters = (try? store.setting("counters")).flatMap { $0 }.flatMap { try? JSON.parse($0) }
        let lastMinute = Double(status.doneInLastMinute) / 60
        var overall = 0.0
        if let first = status.firstSubmitted, let last = status.lastFinished, last > first {
            overall = Double(status.count(.done)) / (last - first)
        }
        if json {
            Console.out(JSON.object([
                ("store", JSON(store.path)),
                ("documents", JSON(status.documents)),
                ("pages", .object([("total", JSON(status.totalPages))] + PageState.allCases.map { ($0.rawValue, JSON(status.count($0))) })),
                ("throughput", .object([("last_minute", .rounded(lastMinute, places: 3)), ("overall", .rounded(overall, places: 3))])),
                ("failures", .array(status.failuresByCode.map { .object([("code", JSON($0.code)), ("count", JSON($0.count))]) })),
                ("workers", .array(status.workers.map { worker in
                    .object([
                        ("id", JSON(worker.id.rawValue)), ("host", JSON(worker.host)), ("pid", JSON(worker.pid)),
                        ("slots", JSON(worker.slots)), ("engine", JSON(worker.engine)), ("state", JSON(worker.state)),
                        ("pages_done", JSON(worker.pagesDone)), ("pages_failed", JSON(worker.pagesFailed)),
                        ("last_seen", JSON(Clock.iso8601(worker.lastSeen))),
                        ("seconds_since_seen", .rounded(now - worker.lastSeen, places: 1)),
                    ])
                })),
                ("coordinator", counters ?? .null),
            ]).pretty + "\n")
            return .success
        }
        var text = "store \(store.path): \(status.documents) document\(status.documents == 1 ? "" : "s"), \(status.totalPages) pages\n"
        text += "  " + PageState.allCases.map { "\($0.rawValue) \(status.count($0))" }.joined(separator: "   ") + "\n"
        text += "throughput: \(Format.fixed(lastMinute, 2)) pages/s over the last minute, \(Format.fixed(overall, 2)) overall\n"
        if !status.failuresByCode.isEmpty {
            text += "failures: " + status.failuresByCode.map { "\($0.code) \($0.count)" }.joined(separator: ", ") + "\n"
        }
        let shownWorkers = status.workers.prefix(50)
        if shownWorkers.isEmpty {
            text += "workers: none yet\n"
        } else {
            text += "workers:\n"
            for worker in shownWorkers {
                text += "  \(worker.id)  \(worker.state)  slots \(worker.slots)  done \(worker.pagesDone)  failed \(worker.pagesFailed)"
                text += "  last heard \(Format.fixed(max(0, now - worker.lastSeen), 1)) s ago\n"
            }
            if status.workers.count > shownWorkers.count { text += "  … \(status.workers.count - shownWorkers.count) more\n" }
        }
        if let counters {
            let beat = counters["heartbeat_at"]?.doubleValue.map { Format.fixed(max(0, now - $0), 1) + " s ago" } ?? "never"
            let malformed = counters["malformed"]?.objectValue?.reduce(0) { $0 + ($1.1.intValue ?? 0) } ?? 0
            text += "coordinator: last report \(beat), dispatched \(counters["dispatched"]?.intValue ?? 0), "
            text += "malformed messages \(malformed)"
            if counters["disk_full"]?.boolValue == true { text += ", DISK FULL: dispatch paused" }
            text += "\n"
        }
        Console.out(text)
        return .success
    }
}
