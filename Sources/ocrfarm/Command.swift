import FarmCore
import FarmRuntime
import FarmStore

/// A subcommand: its name, one-line abstract, usage and options live next to each other, and `help`, usage
/// errors and environment variables are generated from them.
protocol Command: Sendable {
    static var name: String { get }
    static var abstract: String { get }
    /// Positional arguments as shown in the synopsis, e.g. "IMAGE...".
    static var arguments: String { get }
    static var options: [OptionSpec] { get }
    /// A few lines after the options: examples, exit statuses.
    static var discussion: String { get }

    init(_ arguments: ParsedArguments) throws(UsageError)
    func run() throws -> ExitStatus
}

extension Command {
    static var discussion: String { "" }

    static var usage: String {
        let flags = options.filter { !$0.hidden }.map { "[\($0.synopsis)]" }.joined(separator: " ")
        return "ocrfarm \(name)" + (arguments.isEmpty ? "" : " \(arguments)") + (flags.isEmpty ? "" : " \(flags)")
    }

    /// The full help text of the command.
    static var help: String {
        var text = "\(abstract)\n\nUsage: \(usage)\n"
        if !options.isEmpty {
            text += "\nOptions:\n"
            let width = min(28, options.map(\.synopsis.count).max() ?? 0)
            for option in options where !option.hidden {
                let synopsis = option.synopsis
                let padding = String(repeating: " ", count: max(1, width - synopsis.count + 2))
                text += "  \(synopsis)\(padding)\(option.help)"
                text += "  [env \(option.environmentName(in: name))]\n"
            }
        }
        text += "  --help" + String(repeating: " ", count: max(1, min(28, options.map(\.synopsis.count).max() ?? 0) - 4)) + "Show this help.\n"
        if !discussion.isEmpty { text += "\n" + discussion + (discussion.hasSuffix("\n") ? "" : "\n") }
        return text
    }
}

/// Every subcommand, in the order `help` lists them.
enum Commands {
    static let all: [any Command.Type] = [
        RunCommand.self,
        SubmitCommand.self,
        WatchCommand.self,
        CoordinatorCommand.self,
        WorkerCommand.self,
        StatusCommand.self,
        RequeueCommand.self,
        DeleteCommand.self,
        RereadCommand.self,
        SearchCommand.self,
        KeywordsCommand.self,
        ReviewCommand.self,
        ExportCommand.self,
        OCRCommand.self,
        InspectCommand.self,
        HealthCommand.self,
        BackupCommand.self,
        ServeCommand.self,
        TokenCommand.self,
        KeygenCommand.self,
        VersionCommand.self,
        HelpCommand.self,
    ]

    static func named(_ name: String) -> (any Command.Type)? { all.first { $0.name == name } }

    /// The command a mistyped name most likely meant: one it starts, or one at most two edits away.
    static func suggestion(for typed: String) -> String? {
        let name = typed.lowercased()
        if name.count >= 2, let started = all.first(where: { $0.name.hasPrefix(name) }) { return started.name }
        let scored = all.map { ($0.name, editDistance(name, $0.name)) }.min { $0.1 < $1.1 }
        guard let scored, scored.1 <= min(2, max(1, name.count / 3)) else { return nil }
        return scored.0
    }

    /// Levenshtein distance (insertions, deletions and substitutions of characters).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    static var overview: String {
        var text = """
        ocrfarm: a distributed batch OCR farm. Scanned pages and photos in, searchable text out.

        Usage: ocrfarm COMMAND [OPTIONS]

        Commands:

        """
        let width = all.map { $0.name.count }.max() ?? 0
        for command in all {
            text += "  \(command.name)" + String(repeating: " ", count: width - command.name.count + 2) + command.abstract + "\n"
        }
        text += "\nRun 'ocrfarm help COMMAND' or 'ocrfarm COMMAND --help' for a command's options.\n"
        return text
    }

    /// Parses and runs one command line; returns the exit status.
    static func main(_ arguments: [String]) -> ExitStatus {
        guard let first = arguments.first else {
            Console.error(overview)
            return .usage
        }
        if first == "--help" || first == "-h" {
            Console.out(overview)
            return .success
        }
        if first == "--version" { return (try? VersionCommand(ParsedArguments([], options: [])).run()) ?? .software }
        guard let command = named(first) else {
            let hint = suggestion(for: first).map { " (did you mean '\($0)'?)" } ?? ""
            Console.error("ocrfarm: unknown command '\(first)'\(hint)\n\n" + overview)
            return .usage
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            Console.out(command.help)
            return .success
        }
        do {
            let parsed = try ParsedArguments(rest, options: command.options, command: command.name)
            let instance = try command.init(parsed)
            return try instance.run()
        } catch let error as UsageError {
            Console.error("ocrfarm \(command.name): \(error.message)\nUsage: \(command.usage)\nRun 'ocrfarm help \(command.name)' for details.")
            return .usage
        } catch let error as StoreError where error.isDiskFull {
            report(error.message, status: .ioError, command: command.name)
            return .ioError
        } catch let error as StoreError where error.isDamaged {
            report(error.message, status: .damagedStore, command: command.name)
            return .damagedStore
        } catch let error as StoreError where error.kind == .gone {
            report(error.message, status: .ioError, command: command.name)
            return .ioError
        } catch let error as StoreError where error.kind == .cannotCreate {
            report(error.message, status: .cannotCreate, command: command.name)
            return .cannotCreate
        } catch let error as StoreError where error.kind == .notAStore {
            report(error.message, status: .noInput, command: command.name)
            return .noInput
        } catch let error as CommandFailure {
            report(error.message, status: error.status, command: command.name)
            return error.status
        } catch {
            report("\(error)", status: .software, command: command.name)
            return .software
        }
    }

    /// A command that cannot go on says why: as a log event once it has set up its log (coordinator, worker,
    /// run: a log reader must be able to parse every line), else as a plain line.
    private static func report(_ message: String, status: ExitStatus, command: String) {
        if Log.role == "cli" {
            Console.error("ocrfarm \(command): \(message)")
        } else {
            Log.error("stopped", ["command": command, "error": message, "exit_status": String(status.rawValue)])
        }
    }
}

/// A command that cannot go on, with the exit status to leave with.
struct CommandFailure: Error {
    let status: ExitStatus
    let message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}

struct HelpCommand: Command {
    static let name = "help"
    static let abstract = "Show the commands, or one command's options."
    static let arguments = "[COMMAND]"
    static let options: [OptionSpec] = []
    static let discussion = "Exit status: 0; 64 an unknown command."

    let topic: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.count <= 1 else { throw UsageError(message: "help takes at most one command name") }
        topic = arguments.positionals.first
    }

    func run() throws -> ExitStatus {
        guard let topic else {
            Console.out(Commands.overview)
            return .success
        }
        guard let command = Commands.named(topic) else {
            throw UsageError(message: "no command named '\(topic)'; commands: \(Commands.all.map { $0.name }.joined(separator: ", "))")
        }
        Console.out(command.help)
        return .success
    }
}
