import Testing
import FarmCore
import Synchronization
import FarmRuntime

@Suite("Threads and queues")
struct ConcurrencyTests {
    @Test("many producers and consumers pass every item exactly once through a bounded queue")
    func boundedQueue() {
        let queue = BlockingQueue<Int>(capacity: 8)
        let seen = Mutex<[Int]>([])
        let consumers = (0..<3).map { _ in
            NativeThread.start(name: "consumer") {
                while let item = queue.pop() { seen.withLock { $0.append(item) } }
            }
        }
        let producers = (0..<4).map { p in
            NativeThread.start(name: "producer") {
                for i in 0..<500 { queue.push(p * 1000 + i) }
            }
        }
        producers.forEach { $0.join() }
        queue.close()
        consumers.forEach { $0.join() }
        let items = seen.withLock { $0 }
        #expect(items.count == 2000)
        #expect(Set(items).count == 2000)
    }

    @Test("a taken element is not kept alive by the queue (a worker's page bytes must not pile up)")
    func takenElementsAreReleased() {
        final class Payload: Sendable {}
        let queue = BlockingQueue<Payload>()
        weak var first: Payload?
        weak var last: Payload?
        for round in 0..<3 {
            for index in 0..<500 {
                let payload = Payload()
                if round == 0 && index == 0 { first = payload }
                last = payload
                queue.push(payload)
                _ = queue.pop()
            }
        }
        #expect(first == nil, "the first element taken is still referenced")
        #expect(last == nil, "the last element taken is still referenced")
        queue.push(Payload())
        queue.push(Payload())
        #expect(queue.count == 2)
        weak let kept = queue.pop()
        #expect(kept == nil)
        #expect(queue.count == 1)
    }

    @Test("pop times out on an empty queue and returns nil after close")
    func timeoutAndClose() {
        let queue = BlockingQueue<String>()
        let start = Clock.monotonicMilliseconds
        #expect(queue.pop(timeoutMilliseconds: 100) == nil)
        #expect(Clock.monotonicMilliseconds - start >= 90)
        queue.push("last")
        queue.close()
        #expect(queue.pop() == "last")
        #expect(queue.pop() == nil)
        #expect(!queue.push("refused"))
    }
}
