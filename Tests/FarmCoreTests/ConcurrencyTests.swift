import Testing
import FarmCore
import Synchronization

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
