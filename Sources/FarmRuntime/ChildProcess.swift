import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`. The caller waits for it or signals it; `deinit` does neither.
public final class ChildProcess: @unchecked Sendable {
    // Thread-safety: `pid` never changes; `exitStatus` is written only by `wait`/`poll`, called from one thread.
    public let pid: pid_t
    public private(set) var exitStatus: Int32?
    public let arguments: [String]

    /// Starts `executable` with `arguments` (argv[0] is added). `environment` entries are added to this
    /// process's environment. Standard input is /dev/null; output goes where ours goes unless `outputPath` is set.
    public init(executable: String, arguments: [String], environment: [String: String] = [:],
                outputPath: String? = nil, descriptors: [(parent: Int32, child: Int32)] = []) throws(FileError)
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let outputPath {
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Given to the child under these numbers, after its output; each `parent` must differ from every `child`.
        for (parent, child) in descriptors { posix_spawn_file_actions_adddup2(&actions, parent, child) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Children start with default signal handling, whatever we ignore or catch.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var env = ProcessEnvironment.current
        for (key, value) in environment { env[key] = value }
        let argv = [executable] + arguments
        let envp = env.map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let rc = withCStringArray(argv) { argvPointer in
            withCStringArray(envp) { envPointer in
                posix_spawn(&child, executable, &actions, &attributes, argvPointer, envPointer)
            }
        }
        guard rc == 0 else { throw FileError(path: executable, code: rc) }
        pid = child
        self.arguments = arguments
    }

    /// Sends a signal.
    public func signal(_ signal: Int32) {
        guard exitStatus == nil else { return }
        kill(pid, signal)
    }

    /// Waits until the process ends; returns its exit status (128 + signal when a signal ended it).
    @discardableResult
    public func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let result = Self.decode(status)
        exitStatus = result
        return result
    }

    /// The exit status if the process has ended, without waiting.
    public func poll() -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        let result = Self.decode(status)
        exitStatus = result
        return result
    }

    /// Waits up to `milliseconds`; returns the status if the process ended in time.
    public func wait(milliseconds: Int) -> Int32? {
        let deadline = Clock.monotonicMilliseconds + Int64(milliseconds)
        while Clock.monotonicMilliseconds < deadline {
            if let status = poll() { return status }
            Clock.sleep(milliseconds: 20)
        }
        return poll()
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        if signal == 0 { return (status >> 8) & 0xFF }
        return 128 + signal
    }
}

/// The process environment as a dictionary.
public enum ProcessEnvironment {
    public static var current: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}

func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
