import FarmCore
import FarmRuntime
#if canImport(Glibc)
import Glibc
#endif

/// A wrong command line: the message, and the usage of the command it was for.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// One option a command accepts. Help text, environment variables and parsing all come from this one list.
struct OptionSpec: Sendable {
    let name: String
    /// Placeholder for the value ("PATH"); nil for a flag.
    let value: String?
    let help: String
    /// Set for options that may be given more than once.
    let repeatable: Bool
    /// Internal options (used between ocrfarm processes) are accepted but not shown in help.
    let hidden: Bool

    init(_ name: String, value: String? = nil, repeatable: Bool = false, hidden: Bool = false, _ help: String) {
        self.name = name
        self.value = value
        self.help = help
        self.repeatable = repeatable
        self.hidden = hidden
    }

    var isFlag: Bool { value == nil }

    /// The environment variable that supplies this option of `command` when the command line does not. An option
    /// of one meaning in every command that has it (`EnvironmentNames.shared`, or an option only one command has)
    /// is `OCRFARM_NAME` (`--log-level` → `OCRFARM_LOG_LEVEL`); one whose meaning differs by command is scoped to
    /// it (`health --timeout` → `OCRFARM_HEALTH_TIMEOUT`), so setting a variable for one command never changes
    /// another.
    func environmentName(in command: String?) -> String {
        let base = Self.upperSnake(name)
        guard let command, !EnvironmentNames.isShared(name) else { return "OCRFARM_" + base }
        return "OCRFARM_" + Self.upperSnake(command) + "_" + base
    }

    static func upperSnake(_ text: String) -> String {
        String(text.drop(while: { $0 == "-" })).uppercased().map { $0 == "-" ? "_" : $0 }.reduce("") { $0 + String($1) }
    }

    var synopsis: String { value.map { "\(name) \($0)" } ?? name }
}

/// The parsed command line of one command.
struct ParsedArguments {
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []
    private let specs: [String: OptionSpec]
    private let environment: [String: String]
    /// The command parsed for, which names the environment variables (`OptionSpec.environmentName(in:)`).
    private let command: String?

    /// Parses `arguments` against `options`. Options may be written `--name value` or `--name=value`;
    /// `--` ends options.
    init(_ arguments: [String], options: [OptionSpec], command: String? = nil,
         environment: [String: String] = ProcessEnvironment.current) throws(UsageError)
    {
        self.command = command
        var specs: [String: OptionSpec] = [:]
        for option in options { specs[option.name] = option }
        self.specs = specs
        self.environment = environment
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let spec = specs[name] else {
                let close = options.map(\.name).filter { $0.hasPrefix(String(name.prefix(4))) }
                let hint = close.isEmpty ? "" : " (did you mean \(close.joined(separator: " or "))?)"
                throw UsageError(message: "unknown option \(name)\(hint)")
            }
            if spec.isFlag {
                if inlineValue != nil { throw UsageError(message: "\(name) takes no value") }
                flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else { throw UsageError(message: "\(name) needs a value (\(spec.value!))") }
                value = arguments[index]
                index += 1
            }
            if !spec.repeatable && values[name] != nil { throw UsageError(message: "\(name) given more than once") }
            values[name, default: []].append(value)
        }
    }

    /// The option's value from the command line, else from its environment variable.
    func string(_ name: String) -> String? {
        if let value = values[name]?.last { return value }
        guard let spec = specs[name], let value = environment[spec.environmentName(in: command)], !value.isEmpty else { return nil }
        return value
    }

    /// Every value of a repeatable option (comma-separated values are split too).
    func strings(_ name: String) -> [String] {
        let raw = values[name] ?? (string(name).map { [$0] } ?? [])
        return raw.flatMap { $0.split(separator: ",").map { String($0).trimmed } }.filter { !$0.isEmpty }
    }

    func flag(_ name: String) -> Bool {
        if flags.contains(name) { return true }
        guard let spec = specs[name], let value = environment[spec.environmentName(in: command)] else { return false }
        return ["1", "true", "yes", "on"].contains(value.lowercased())
    }

    func int(_ name: String, range: ClosedRange<Int>? = nil) throws(UsageError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) else { throw UsageError(message: "\(name) takes a whole number, not '\(text)'") }
        if let range, !range.contains(value) {
            throw UsageError(message: "\(name) must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
        }
        return value
    }

    func double(_ name: String, range: ClosedRange<Double>? = nil) throws(UsageError) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text), value.isFinite else { throw UsageError(message: "\(name) takes a number, not '\(text)'") }
        if let range, !range.contains(value) {
            throw UsageError(message: "\(name) must be between \(JSON.format(range.lowerBound)) and \(JSON.format(range.upperBound)), not \(text)")
        }
        return value
    }

    /// The value of an option limited to `choices`.
    func choice(_ name: String, _ choices: [String]) throws(UsageError) -> String? {
        guard let value = string(name) else { return nil }
        guard choices.contains(value) else {
            throw UsageError(message: "\(name) must be one of \(choices.joined(separator: ", ")), not '\(value)'")
        }
        return value
    }
}

extension String {
    var trimmed: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}

/// Which options' environment variables are shared by every command that has the option.
enum EnvironmentNames {
    /// Options of one meaning wherever they appear, though their help is worded for each command: the deployment
    /// settings that the unit files and job scripts set, and flags that mean the same everywhere.
    static let alike: Set<String> = [
        "--store", "--connect", "--bind", "--slots", "--lang", "--engine", "--heartbeat", "--grace", "--log-level",
        "--log-format", "--curve-secret", "--coordinator-key", "--authorized-workers", "--json", "--dry-run",
        "--max-attempts", "--retry-delay",
    ]

    /// Options whose variable is `OCRFARM_NAME`: those in `alike`, and those whose every command shares one
    /// spec (one help text: `--mode` in ocr, submit and run). The rest are scoped to their command.
    static let shared: Set<String> = {
        var help: [String: Set<String>] = [:]
        for command in Commands.all {
            for option in command.options { help[option.name, default: []].insert(option.help) }
        }
        return alike.union(help.filter { $0.value.count == 1 }.keys)
    }()

    static func isShared(_ option: String) -> Bool { shared.contains(option) }
}
