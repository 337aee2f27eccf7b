import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

@Suite("Store: one coordinator per store")
struct CoordinatorLockTests {
    let folder = TemporaryDirectory("coordinator-lock")

    @Test("a second holder is refused with the first one's host, pid and start; released, the lock can be taken again")
    func exclusive() throws {
        let store = folder.file("farm.db")
        let first = CoordinatorLock.Holder(host: "host-a", pid: 4242, since: 1_800_000_000)
        var lock: CoordinatorLock? = try CoordinatorLock(store: store, holder: first)
        #expect(lock?.previous == nil)
        #expect(throws: CoordinatorLock.Held(store: store, holder: first)) {
            _ = try CoordinatorLock(store: store, holder: .init(host: "host-b", pid: 7, since: 1_800_000_100))
        }
        do {
            _ = try CoordinatorLock(store: store, holder: .init(host: "host-b", pid: 7, since: 1_800_000_100))
            Issue.record("the second lock was taken")
        } catch let error as CoordinatorLock.Held {
            #expect(error.description.contains("pid 4242 on host-a since 2027-01-15T08:00:00.000Z"), "\(error)")
        }
        lock = nil
        let again = try CoordinatorLock(store: store, holder: .init(host: "host-b", pid: 7, since: 1_800_000_200))
        #expect(again.previous == nil, "a released lock leaves no holder behind")
    }

    @Test("the lock of a holder that died is taken over, and says whose it was")
    func staleLock() throws {
        let store = folder.file("farm.db")
        // What a SIGKILLed coordinator leaves: its line in the file, its flock gone with its process.
        try FileSystem.write("host-a 4242 1800000000.000\n", to: CoordinatorLock.path(for: store))
        let lock = try CoordinatorLock(store: store, holder: .init(host: "host-b", pid: 7, since: 1_800_000_100))
        #expect(lock.previous == CoordinatorLock.Holder(host: "host-a", pid: 4242, since: 1_800_000_000))
        #expect(try FileSystem.readText(CoordinatorLock.path(for: store)).hasPrefix("host-b 7 "))
    }

    @Test("the lock goes with the store file: a symbolic link or a hard link to it is refused, naming the holder (issue 37)")
    func linksToTheStore() throws {
        let store = folder.file("farm.db")
        _ = try Store(path: store)
        let first = CoordinatorLock.Holder(host: "host-a", pid: 4242, since: 1_800_000_000)
        var lock: CoordinatorLock? = try CoordinatorLock(store: store, holder: first)
        let symbolic = folder.file("linked.db")
        #expect(symlink(store, symbolic) == 0)
        // Through the link: the holder is read from the lock file beside the store the link resolves to.
        #expect(throws: CoordinatorLock.Held(store: symbolic, holder: first)) {
            _ = try CoordinatorLock(store: symbolic, holder: .init(host: "host-b", pid: 7, since: 1_800_000_100))
        }
        // A hard link elsewhere has a lock file of its own name: the holder's pid comes from /proc/locks.
        let elsewhere = folder.file("elsewhere")
        try FileSystem.makeDirectory(elsewhere)
        let hard = elsewhere + "/hard.db"
        #expect(link(store, hard) == 0)
        do {
            _ = try CoordinatorLock(store: hard, holder: .init(host: "host-b", pid: 7, since: 1_800_000_100))
            Issue.record("a coordinator took the store through a hard link")
        } catch let error as CoordinatorLock.Held {
            #expect(error.holder?.pid == Int(getpid()), "\(error)")
            #expect(error.description.contains("pid \(getpid()) on "), "\(error)")
            let since = error.holder.map(\.since) ?? 0
            let age: Double = abs(since - Clock.now)
            #expect(age < 86_400, "the holder started \(since)")
        }
        let refusedLockFile = (try? FileSystem.readText(hard + "-lock")) ?? ""
        #expect(refusedLockFile.isEmpty, "a refused lock leaves no holder in its lock file: \(refusedLockFile)")
        // Released, the store can be taken by either name.
        lock = nil
        var viaHard: CoordinatorLock? = try CoordinatorLock(store: hard, holder: .init(host: "host-b", pid: 7, since: 1_800_000_200))
        #expect(throws: CoordinatorLock.Held.self) {
            _ = try CoordinatorLock(store: store, holder: .init(host: "host-c", pid: 8, since: 1_800_000_300))
        }
        viaHard = nil
        _ = try CoordinatorLock(store: store, holder: .init(host: "host-c", pid: 8, since: 1_800_000_300))
        withExtendedLifetime((lock, viaHard)) {}
    }
}
