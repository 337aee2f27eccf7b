import FarmCoordinator
import FarmCore
import ZeroMQ

/// `ocrfarm health`: does a coordinator answer? For probes and scripts.
struct HealthCommand: Command {
    static let name = "health"
    static let abstract = "Exit 0 when the coordinator answers within a timeout (for probes and scripts)."
    static let arguments = ""
    static let options: [OptionSpec] = [
        OptionSpec("--connect", value: "ADDR", "The coordinator, tcp://HOST:PORT or HOST:PORT (default: tcp://127.0.0.1:5555)."),
        OptionSpec("--timeout", value: "SECONDS", "How long to wait for the answer (default: 2)."),
    ]
    static let discussion = """
    Sends one PING and waits for the coordinator's PONG. The coordinator answers from its poll loop, so a loop
    that is stuck fails the probe even while its port still accepts connections. The probe never joins as a
    worker: it gets no pages and does not show in `status`.

    Prints one line: "ok ADDR version V in N ms", or the reason on stderr.

    Exit status: 0 the coordinator answered; 64 bad options or address; 69 no answer within the timeout.
    """

    let endpoint: String
    let timeoutMilliseconds: Int

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "health takes no arguments") }
        let address = arguments.string("--connect") ?? "tcp://127.0.0.1:5555"
        endpoint = address.contains("://") ? address : "tcp://" + address
        timeoutMilliseconds = Int(((try arguments.double("--timeout", range: 0.01...3600)) ?? 2) * 1000)
    }

    func run() throws -> ExitStatus {
        let context = try Context()
        do {
            let answer = try HealthProbe(endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds).check(context: context)
            Console.out("ok \(endpoint) version \(answer.version) in \(Format.fixed(answer.milliseconds, 1)) ms\n")
            return .success
        } catch {
            if error.badEndpoint { throw UsageError(message: error.message) }
            throw CommandFailure(.unavailable, error.message)
        }
    }
}
