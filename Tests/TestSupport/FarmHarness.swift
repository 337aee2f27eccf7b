import FarmCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// A process started in the background, its output in a log file.
public final class BackgroundProcess: @unchecked Sendable {
    public let process: Process
    public let logPath: String

    public init(_ executable: String, _ arguments: [String], logPath: String, environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        self.logPath = logPath
        try process.run()
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// kill -9: no cleanup, no goodbye.
    public func kill9() {
        kill(pid, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then wait up to `seconds`; SIGKILL if it did not stop. Returns the exit status.
    @discardableResult
    public func terminate(waiting seconds: Double = 15) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill9() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    // FileSystem's reader, not String(contentsOfFile:): under Scripts/leakcheck, FoundationEssentials'
    // readBytesFromFile was reported leaking its buffer when reading a running server's log (FarmWebTests).
    public var log: String { (try? FileSystem.readText(logPath)) ?? "" }

    deinit { if process.isRunning { kill(pid, SIGKILL) } }
}

/// A farm made of separate `ocrfarm` processes on loopback, for end-to-end tests.
public final class FarmHarness: @unchecked Sendable {
    public let folder = TemporaryDirectory("farm-e2e")
    public var storePath: String { folder.file("farm.db") }
    public private(set) var processes: [BackgroundProcess] = []

    public init() {}

    /// A TCP port on 127.0.0.1 that was free a moment ago (the system chose it).
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @discardableResult
    public func submit(_ arguments: [String]) throws -> ProcessOutput {
        try Run.ocrfarm(["submit", "--store", storePath] + arguments)
    }

    public func startCoordinator(port: Int, _ extra: [String] = [], name: String = "coordinator") throws -> BackgroundProcess {
        let process = try BackgroundProcess(Fixtures.binary, ["coordinator", "--store", storePath,
                                                              "--bind", "tcp://127.0.0.1:\(port)"] + extra,
                                            logPath: folder.file("\(name).log"))
        processes.append(process)
        return process
    }

    public func startWorker(port: Int, _ extra: [String] = [], name: String, environment: [String: String] = [:]) throws -> BackgroundProcess {
        let process = try BackgroundProcess(Fixtures.binary, ["worker", "--connect", "tcp://127.0.0.1:\(port)"] + extra,
                                            logPath: folder.file("\(name).log"), environment: environment)
        processes.append(process)
        return process
    }

    /// Polls `condition` every 50 ms until it holds or `seconds` pass.
    @discardableResult
    public static func wait(seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }

    public func stopAll() {
        for process in processes.reversed() { process.terminate(waiting: 10) }
    }

    /// Every process's log, for failure messages.
    public var logs: String { processes.map { "--- \($0.logPath)\n\($0.log)" }.joined(separator: "\n") }

    deinit { stopAll() }
}
