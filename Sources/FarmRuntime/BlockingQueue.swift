#if canImport(Glibc)
import Glibc
#endif
import FarmCore

/// A first-in first-out queue that threads block on. `close()` wakes every waiter; after it, `pop` drains what is
/// left and then returns nil. With a `capacity`, `push` waits while the queue is full.
public final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    // Thread-safety: every access to `items`, `head` and `closed` holds `mutex`.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var notFull = pthread_cond_t()
    /// Elements from `head` on are waiting; slots before `head` were taken and are emptied at once, so the queue
    /// never keeps a taken element alive (a page's bytes, a result) until the next compaction.
    private var items: [Element?] = []
    private var head = 0
    private var closed = false
    private let capacity: Int

    public init(capacity: Int = .max) {
        self.capacity = max(1, capacity)
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attributes)
        pthread_cond_init(&notFull, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_cond_destroy(&notFull)
        pthread_mutex_destroy(&mutex)
    }

    /// Appends an element, waiting while the queue is at capacity. Returns false if the queue was closed.
    @discardableResult
    public func push(_ element: Element) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while items.count - head >= capacity && !closed { pthread_cond_wait(&notFull, &mutex) }
        guard !closed else { return false }
        items.append(element)
        pthread_cond_signal(&condition)
        return true
    }

    /// Takes the oldest element, waiting up to `timeoutMilliseconds` (nil: until one arrives or the queue closes).
    public func pop(timeoutMilliseconds: Int? = nil) -> Element? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        var deadline = timespec()
        if let timeoutMilliseconds {
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let nanoseconds = Int(deadline.tv_nsec) + (timeoutMilliseconds % 1000) * 1_000_000
            deadline.tv_sec += timeoutMilliseconds / 1000 + nanoseconds / 1_000_000_000
            deadline.tv_nsec = nanoseconds % 1_000_000_000
        }
        while head == items.count && !closed {
            if timeoutMilliseconds != nil {
                if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT { break }
            } else {
                pthread_cond_wait(&condition, &mutex)
            }
        }
        guard head < items.count else { return nil }
        let element = items[head].take()
        head += 1
        pthread_cond_signal(&notFull)
        if head >= 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Wakes all waiters; no more elements will be accepted after the remaining ones are drained.
    public func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&condition)
        pthread_cond_broadcast(&notFull)
        pthread_mutex_unlock(&mutex)
    }

    public var count: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return items.count - head
    }
}
