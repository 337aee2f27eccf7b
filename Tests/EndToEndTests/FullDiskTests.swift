import Testing
import FarmCore
import FarmRuntime
@testable import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted by the test (root only), unmounted when it goes away.
final class TmpfsMount {
    let path: String

    /// Mounts a tmpfs of `size` (as mount takes it: "16m") at `path`; nil when not root or mount is not allowed.
    init?(at path: String, size: String) throws {
        self.path = path
        guard getuid() == 0, let mount = Run.which("mount") else { return nil }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard try Run.process(mount, ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]).status == 0 else { return nil }
    }

    /// Writes zeros to `name` until the file system refuses (ENOSPC); returns the bytes written.
    func fill(_ name: String) throws -> Int {
        let fd = open(path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw FillError(message: "cannot create \(name): errno \(errno)") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0, count: 64 << 10)
        var total = 0
        while true {
            let written = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written > 0 { total += written; continue }
            if written < 0 && errno == EINTR { continue }
            guard written < 0 && errno == ENOSPC else { throw FillError(message: "write: errno \(errno)") }
            return total
        }
    }

    /// Grows (or shrinks) the tmpfs in place.
    func resize(_ size: String) throws -> Bool {
        guard let mount = Run.which("mount") else { return false }
        return try Run.process(mount, ["-o", "remount,size=\(size)", path]).status == 0
    }

    private var mounted = true

    /// Unmounts (lazily if something still has it open); once.
    func unmount() {
        guard mounted, let umount = Run.which("umount") else { return }
        mounted = false
        if (try? Run.process(umount, [path]))?.status != 0 { _ = try? Run.process(umount, ["-l", path]) }
    }

    deinit { unmount() }

    struct FillError: Error { let message: String }
}

@Suite("A full disk under the store (end to end)", .serialized)
struct FullDiskTests {
    /// User plus system CPU seconds a process has used so far.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? FileSystem.readText("/proc/\(pid)/stat"),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("a full disk pauses dispatch, keeps accepted results, shows in status, and the batch finishes once space returns",
          .enabled(if: Capabilities.canMount, "mounts a tmpfs: needs root"))
    func fullDiskPausesAndResumes() throws {
        let farm = FarmHarness()
        let disk = try #require(try TmpfsMount(at: farm.folder.file("disk"), size: "16m"), "mount -t tmpfs was not allowed")
        defer { disk.unmount() }
        let store = disk.path + "/farm.db"
        // Real pages first (the queue is in id order), so a page is being read when the disk fills.
        let real = 3, tiny = 12
        #expect(try Run.ocrfarm(["submit", "--store", store, try TestImages.phototestCopies(real, in: farm.folder)]).status == 0)
        #expect(try Run.ocrfarm(["submit", "--store", store, try TestImages.tinyPages(tiny, in: farm.folder)]).status == 0)
        func open() throws -> Store { try Store(path: store, readOnly: true) }

        let port = FarmHarness.freePort()
        let coordinator = try BackgroundProcess(Fixtures.binary, ["coordinator", "--store", store,
                                                                  "--bind", "tcp://127.0.0.1:\(port)"],
                                                logPath: farm.folder.file("coordinator.log"))
        let reader = try BackgroundProcess(Fixtures.binary, ["worker", "--connect", "tcp://127.0.0.1:\(port)",
                                                             "--slots", "1", "--prefetch", "0"],
                                           logPath: farm.folder.file("reader.log"))
        var processes = [coordinator, reader]
        defer { for process in processes.reversed() { process.terminate() } }
        var logs: String { processes.map { "--- \($0.logPath)\n\($0.log)" }.joined(separator: "\n") }

        // The disk fills while the first real page is being read.
        #expect(try FarmHarness.wait(seconds: 30) { try open().status().count(.leased) == 1 }, "\(logs)")
        let started = Date()
        let filled = try disk.fill("filler")
        #expect(DiskSpace.of(disk.path)?.isFull == true)
        let noticed = FarmHarness.wait(seconds: 10) { coordinator.log.contains("the store's disk is full") }
        #expect(noticed, "\(logs)")
        let noticedAfter = Date().timeIntervalSince(started)
        let line = coordinator.log.split(separator: "\n").first { $0.contains("the store's disk is full") } ?? ""
        #expect(line.contains("level=error") && line.contains("store=\(store)") && line.contains("free=\"0 B\""), "\(line)")

        // A worker that joins now gets nothing; neither does the reader once its page is done.
        let fast = try BackgroundProcess(Fixtures.binary, ["worker", "--connect", "tcp://127.0.0.1:\(port)",
                                                           "--engine", "none", "--slots", "2"],
                                         logPath: farm.folder.file("fast.log"))
        processes.append(fast)
        let joined = FarmHarness.wait(seconds: 10) { coordinator.log.components(separatedBy: "worker joined").count - 1 == 2 }
        #expect(joined, "\(logs)")
        let before = try open().status()
        let cpuBefore = Self.cpuSeconds(coordinator.pid)
        let window = 4.0
        var maxLeased = 0
        let windowEnd = Date().addingTimeInterval(window)
        while Date() < windowEnd {
            maxLeased = max(maxLeased, try open().status().count(.leased))
            usleep(200_000)
        }
        let cpu = Self.cpuSeconds(coordinator.pid) - cpuBefore
        let during = try open().status()
        #expect(coordinator.isRunning, "\(logs)")
        #expect(maxLeased <= 1 && during.count(.done) == before.count(.done), "dispatch went on: \(during) \(logs)")
        #expect(cpu < window * 0.25, "the coordinator used \(cpu) s of CPU in \(window) s while paused")
        // Said once, not once a retry.
        #expect(coordinator.log.components(separatedBy: "the store's disk is full").count - 1 == 1, "\(coordinator.log)")
        #expect(!coordinator.log.contains("store write failed"), "\(coordinator.log)")

        // status cannot get fresh counters from the coordinator, but tells the disk is full and why it is silent.
        let status = try Run.ocrfarm(["status", "--store", store])
        #expect(status.status == 0)
        #expect(status.text.contains("store disk: FULL, 0 B free"), "\(status.text)")
        #expect(status.text.contains("it cannot report to a full disk") || status.text.contains("DISK FULL: dispatch paused"),
                "\(status.text)")
        let json = try JSON.parse(Array(try Run.ocrfarm(["status", "--store", store, "--json"]).stdout))
        #expect(json["store_disk"]?["full"]?.boolValue == true && json["store_disk"]?["available_bytes"]?.intValue == 0)

        // Space returns: the held results are written and the batch finishes, every page read once.
        unlink(disk.path + "/filler")
        let freed = Date()
        #expect(FarmHarness.wait(seconds: 10) { coordinator.log.contains("dispatch resumes") }, "\(logs)")
        let resumedAfter = Date().timeIntervalSince(freed)
        let resumed = coordinator.log.split(separator: "\n").first { $0.contains("dispatch resumes") } ?? ""
        let written = resumed.split(separator: " ").first { $0.hasPrefix("results_written=") }
            .flatMap { Int($0.dropFirst("results_written=".count)) } ?? 0
        #expect(written == 1, "the result read during the pause is written on resume: \(resumed)")
        let total = real + tiny
        #expect(try FarmHarness.wait(seconds: 60) { try open().status().count(.done) == total }, "\(logs)")
        let finishedAfter = Date().timeIntervalSince(freed)

        let check = try open()
        let results = try check.connection.prepare("SELECT count(*) FROM results").rows([]) { $0.int(0) }.first
        #expect(results == total)
        let repeated = try check.connection.prepare("""
            SELECT page_id, count(*) FROM attempts GROUP BY page_id HAVING count(*) != 1
            """).rows([]) { "page \($0.int(0)): \($0.int(1)) attempts" }
        #expect(repeated.isEmpty, "every page read exactly once: \(repeated) \(logs)")
        #expect(try check.integrityCheck() == "ok")
        // Workers stayed connected through the pause.
        #expect(!reader.log.contains("reconnecting") && !fast.log.contains("reconnecting"), "\(logs)")
        #expect(coordinator.terminate() == 0, "\(logs)")
        print("full disk: filled \(filled / 1024) KB; noticed after \(Format.fixed(noticedAfter, 2)) s; "
              + "paused CPU \(Format.fixed(cpu, 2)) s in \(window) s; resumed \(Format.fixed(resumedAfter, 2)) s and "
              + "finished \(Format.fixed(finishedAfter, 2)) s after space returned")
    }

    @Test("with no coordinator running, commands on a full disk exit 74 naming the store and its free space; a grown disk works again",
          .enabled(if: Capabilities.canMount, "mounts a tmpfs: needs root"))
    func commandsOnAFullDisk() throws {
        let farm = FarmHarness()
        let disk = try #require(try TmpfsMount(at: farm.folder.file("disk"), size: "8m"), "mount -t tmpfs was not allowed")
        defer { disk.unmount() }
        let store = disk.path + "/farm.db"
        #expect(try Run.ocrfarm(["submit", "--store", store, try TestImages.tinyPages(2, in: farm.folder)]).status == 0)
        _ = try disk.fill("filler")
        // No process has the store open, so SQLite must create its shared memory on the full disk: even reading fails.
        let more = try TestImages.tinyPages(2, in: farm.folder, prefix: "more")
        for arguments in [["submit", more], ["status"], ["coordinator", "--bind", "tcp://127.0.0.1:\(FarmHarness.freePort())"]] {
            let output = try Run.ocrfarm([arguments[0], "--store", store] + arguments.dropFirst())
            #expect(output.status == 74, "\(arguments[0]): \(output.stderr)")
            #expect(output.stderr.contains("store \(store): the disk is full (0 B free of 8.0 MB)"), "\(output.stderr)")
        }
        // Space returns by growing the file system: the store works again, nothing lost.
        #expect(try disk.resize("16m"))
        #expect(try Run.ocrfarm(["submit", "--store", store, more]).status == 0)
        let status = try Store(path: store, readOnly: true).status()
        #expect(status.count(.queued) == 4)
        #expect(try Store(path: store, readOnly: true).integrityCheck() == "ok")
    }
}
