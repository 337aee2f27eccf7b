import FarmCoordinator
import FarmCore
import FarmRuntime
import FarmStore
import ZeroMQ

/// `ocrfarm health`: does a coordinator answer? For probes and scripts.
struct HealthCommand: Command {
    static let name = "health"
    static let abstract = "Exit 0 when the coordinator answers within a timeout, or the store is sound (probes, scripts)."
    static let arguments = ""
    static let options: [OptionSpec] = [
        OptionSpec("--connect", value: "ADDR", "The coordinator, tcp://HOST:PORT or HOST:PORT (default: tcp://127.0.0.1:5555)."),
        OptionSpec("--timeout", value: "SECONDS", "How long to wait for the answer (default: 2)."),
        OptionSpec("--store", value: "PATH", "Check this store file instead (SQLite's quick_check; with --connect, both)."),
    ] + CurveClientOptions.specs(secretHelp: "For a coordinator with CURVE: an authorized key's secret file (mode 0600).")
    static let discussion = """
    Sends one PING and waits for the coordinator's PONG. The coordinator answers from its poll loop, so a loop
    that is stuck fails the probe even while its port still accepts connections. The probe never joins as a
    worker: it gets no pages and does not show in `status`.

    Prints one line: "ok ADDR version V in N ms", or the reason on stderr.

    A coordinator with CURVE answers only a probe whose key it authorizes: give --curve-secret and --coordinator-key.

    With --store, checks the store file instead: it is an ocrfarm store and SQLite's quick_check finds it sound
    (it reads the whole file: seconds per GB). Prints "ok store PATH: N pages". With --connect too, it does both.

    Exit status: 0 the coordinator answered (and the store is sound); 64 bad options or address; 66 no store or not an
    ocrfarm store; 69 no answer within the timeout; 76 the store is damaged; 78 a bad key file.
    """

    let endpoint: String?
    let timeoutMilliseconds: Int
    let curve: CurveClientOptions
    let storePath: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "health takes no arguments") }
        storePath = arguments.string("--store")
        // With only --store, no coordinator is probed; with neither, the default coordinator is.
        let address = arguments.string("--connect") ?? (storePath == nil ? "tcp://127.0.0.1:5555" : nil)
        endpoint = address.map { $0.contains("://") ? $0 : "tcp://" + $0 }
        timeoutMilliseconds = Int(((try arguments.double("--timeout", range: 0.01...3600)) ?? 2) * 1000)
        curve = try CurveClientOptions(arguments)
    }

    func run() throws -> ExitStatus {
        if let storePath {
            let store: Store
            store = try Store(path: storePath, readOnly: true)
            try store.checkSound()
            Console.out("ok store \(storePath): \(try store.status().totalPages) pages\n")
        }
        guard let endpoint else { return .success }
        var probe = HealthProbe(endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds)
        probe.curve = try curve.keys()
        let context = try Context()
        do {
            let answer = try probe.check(context: context)
            Console.out("ok \(endpoint) version \(answer.version) in \(Format.fixed(answer.milliseconds, 1)) ms\n")
            return .success
        } catch {
            if error.badEndpoint { throw UsageError(message: error.message) }
            throw CommandFailure(.unavailable, error.message)
        }
    }
}
