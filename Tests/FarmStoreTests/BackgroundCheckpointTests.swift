import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport

@Suite("Store: write-ahead log checkpoints on a thread of their own")
struct BackgroundCheckpointTests {
    let folder = TemporaryDirectory("store-checkpoint")

    func addPages(_ store: Store, _ count: Int, from first: Int) throws {
        let pages = (first..<(first + count)).map { NewPage(source: RawPath("/data/p\($0).png"), index: 0, kind: .image) }
        _ = try store.add([NewDocument(name: "doc\(first)", source: RawPath("/data/\(first)"), contentHash: "h\(first)",
                                       priority: 0, options: PageOptions(), pages: pages)])
    }

    static func waitFor(_ condition: () -> Bool) -> Bool {
        for _ in 0..<500 where !condition() { Clock.sleep(milliseconds: 10) }
        return condition()
    }

    @Test("past the threshold the thread checkpoints; below the fallback the committing connection never does")
    func thresholdAndFallback() throws {
        let store = try Store(path: folder.file("farm.db"))
        let checkpointer = store.checkpointInBackground(threshold: 20, fallback: 1_000_000)
        for batch in 0..<10 { try addPages(store, 100, from: batch * 100) }
        #expect(Self.waitFor { checkpointer.done.count >= 1 }, "the thread checkpointed the log")
        store.stopCheckpointsInBackground(checkpointer)
        #expect(try store.integrityCheck() == "ok")

        // Without the thread (the fallback at 20 frames and no thread asked): the commit checkpoints in place, so
        // the log is reset and stays small instead of growing with every transaction.
        let inPlace = try Store(path: folder.file("in-place.db"))
        let unasked = inPlace.checkpointInBackground(threshold: 1_000_000, fallback: 20)
        for batch in 0..<30 { try addPages(inPlace, 100, from: batch * 100) }
        let small = (try? FileSystem.status(inPlace.path + "-wal").size) ?? 0
        inPlace.stopCheckpointsInBackground(unasked)
        #expect(unasked.done.count == 0)

        let grown = try Store(path: folder.file("grown.db"))
        let never = grown.checkpointInBackground(threshold: 1_000_000, fallback: 1_000_000)
        for batch in 0..<30 { try addPages(grown, 100, from: batch * 100) }
        let large = (try? FileSystem.status(grown.path + "-wal").size) ?? 0
        grown.stopCheckpointsInBackground(never)
        #expect(small < large / 2, "in-place checkpoints kept the log at \(small) bytes; without any it grew to \(large)")
    }
}
