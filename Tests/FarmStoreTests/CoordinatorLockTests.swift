import Testing
import FarmCore
import FarmStore
import TestSupport

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
}
