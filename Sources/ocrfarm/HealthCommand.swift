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
    ] + CurveClientOptions.specs(secretHelp: "For a coordinator with CURVE: an authorized key's secret file (mode 0600).")
    static let discussion = """
    Sends one PING and waits for the coordinator's PONG. The coordinator answers from its poll loop, so a loop
    that is stuck fails the probe even while its port still accepts connections. The probe never joins as a
    worker: it gets no pages and does not show in `status`.

    Prints one line: "ok ADDR version V in N ms", or the reason on stderr.

    A coordinator with CURVE answers only a probe whose key it authorizes: give --curve-secret and --coordinator-key.

    Exit status: 0 the coordinator answered; 64 bad options or address; 69 no answer within the timeout; 78 a bad key file.
    """

    let endpoint: String
    let timeoutMilliseconds: Int
    let curve: CurveClientOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "health takes no arguments") }
        let address = arguments.string("--connect") ?? "tcp://127.0.0.1:5555"
        endpoint = address.contains("://") ? address : "tcp://" + address
        timeoutMilliseconds = Int(((try arguments.double("--timeout", range: 0.01...3600)) ?? 2) * 1000)
        curve = try CurveClientOptions(arguments)
    }

    func run() throws -> ExitStatus {
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
