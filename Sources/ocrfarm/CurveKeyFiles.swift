import FarmCoordinator
import FarmCore
import FarmRuntime
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// `--curve-secret FILE --coordinator-key FILE`: the CURVE client side, as a worker and the health probe take it.
struct CurveClientOptions {
    let secret: String?
    let coordinatorKey: String?

    /// The two options; `secretHelp` says whose secret key it is.
    static func specs(secretHelp: String) -> [OptionSpec] {
        [OptionSpec("--curve-secret", value: "FILE", secretHelp),
         OptionSpec("--coordinator-key", value: "FILE", "With --curve-secret: the coordinator's public key (its .pub file).")]
    }

    init(_ arguments: ParsedArguments) throws(UsageError) {
        secret = arguments.string("--curve-secret")
        coordinatorKey = arguments.string("--coordinator-key")
        guard (secret == nil) == (coordinatorKey == nil) else {
            throw UsageError(message: "--curve-secret and --coordinator-key go together")
        }
    }

    /// The keys from their files (nil without CURVE); every error names the file.
    func keys() throws(CommandFailure) -> CurveClientKeys? {
        guard let secret, let coordinatorKey else { return nil }
        return CurveClientKeys(serverKey: try CurveKeyFiles.publicKey(coordinatorKey), pair: try CurveKeyFiles.secret(secret))
    }
}

/// Key files of `ocrfarm keygen`: NAME.key holds the secret key, NAME.pub the public key, each one line of
/// 40-character Z85 text. Every error names the file and exits 78 (configuration).
enum CurveKeyFiles {
    /// Writes NAME.key (mode 0600, created with that mode) and NAME.pub (0644); refuses to replace either.
    static func write(_ pair: CurveKeyPair, name: String) throws(CommandFailure) {
        let secretPath = name + ".key", publicPath = name + ".pub"
        for path in [secretPath, publicPath] where FileSystem.exists(path) {
            throw CommandFailure(.cannotCreate, "\(path): already exists; keygen never replaces a key")
        }
        try create(secretPath, pair.secretKey + "\n", mode: 0o600)
        do {
            try create(publicPath, pair.publicKey + "\n", mode: 0o644)
        } catch {
            unlink(secretPath)
            throw error
        }
    }

    /// O_EXCL, so a file that appeared meanwhile is not replaced, and the mode is set at creation: the secret
    /// is never readable by others, not even for a moment.
    private static func create(_ path: String, _ text: String, mode: mode_t) throws(CommandFailure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw CommandFailure(.cannotCreate, FileError(path: path).description) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let failure = written == bytes.count ? nil : FileError(path: path)
        if close(fd) != 0 || failure != nil {
            unlink(path)
            throw CommandFailure(.ioError, (failure ?? FileError(path: path)).description)
        }
    }

    /// A secret key file, refused when group or others may read it (like ssh does), with its public key.
    static func secret(_ path: String) throws(CommandFailure) -> CurveKeyPair {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure(.config, "secret key \(FileError(path: path))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CommandFailure(.config, "secret key \(FileError(path: path))") }
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw CommandFailure(.config, "secret key \(path): mode \(mode) lets group or others read it; run chmod 600 \(path)")
        }
        let key = try text(path)
        guard let publicKey = try? Curve.publicKey(forSecret: key) else {
            throw CommandFailure(.config, "secret key \(path): not a CURVE secret key")
        }
        return CurveKeyPair(publicKey: publicKey, secretKey: key)
    }

    /// A public key file.
    static func publicKey(_ path: String) throws(CommandFailure) -> String {
        try text(path)
    }

    /// The public keys of every *.pub file in `directory`.
    static func authorized(_ directory: String) throws(CommandFailure) -> Set<String> {
        let names: [String]
        do { names = try FileSystem.entries(directory) } catch {
            throw CommandFailure(.config, "authorized workers \(error)")
        }
        var keys: Set<String> = []
        for name in names where name.hasSuffix(".pub") {
            keys.insert(try publicKey(directory + "/" + FileSystem.baseName(name)))
        }
        if keys.isEmpty { Log.warning("no worker keys authorized: every worker will be refused", ["directory": directory]) }
        return keys
    }

    /// One Z85 key of 40 characters, surrounding white space ignored.
    private static func text(_ path: String) throws(CommandFailure) -> String {
        let bytes: [UInt8]
        do { bytes = try FileSystem.read(path, limit: 4096) } catch { throw CommandFailure(.config, "key file \(error)") }
        let key = String(decoding: bytes, as: UTF8.self).trimmed
        guard Curve.isValidKey(key) else {
            throw CommandFailure(.config, "key file \(path): expected 40 characters of Z85 text, found \(key.utf8.count) characters"
                                 + (key.utf8.count == 40 ? " that are not Z85" : ""))
        }
        return key
    }
}

/// `ocrfarm keygen`: a CURVE key pair for a coordinator or a worker.
struct KeygenCommand: Command {
    static let name = "keygen"
    static let abstract = "Write a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub (public)."
    static let arguments = ""
    static let options: [OptionSpec] = [
        OptionSpec("--out", value: "NAME", "Path and base name of the two files (required)."),
    ]
    static let discussion = """
    Each file holds one line of Z85 text (40 characters). Give the coordinator its .key with --curve-secret and a
    folder of the workers' .pub files with --authorized-workers; give each worker its own .key with --curve-secret
    and the coordinator's .pub with --coordinator-key. Existing files are never replaced.

    Exit status: 0 written; 64 bad options; 73 a file exists or cannot be created.
    """

    let name: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "keygen takes no arguments; use --out NAME") }
        guard let name = arguments.string("--out"), !name.isEmpty else { throw UsageError(message: "keygen needs --out NAME") }
        self.name = name
    }

    func run() throws -> ExitStatus {
        let pair = try Curve.generateKeyPair()
        try CurveKeyFiles.write(pair, name: name)
        Console.out("wrote \(name).key (secret) and \(name).pub: \(pair.publicKey)\n")
        return .success
    }
}
