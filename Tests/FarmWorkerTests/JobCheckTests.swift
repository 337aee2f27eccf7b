@testable import FarmWorker
import Crypto
import FarmCore
import FarmPipeline
import FarmProtocol
import Testing

/// Issue 37: the worker reads a page only if its bytes are the ones the coordinator checked and sent.
@Suite("a JOB's bytes are checked on arrival")
struct JobCheckTests {
    func job(_ bytes: [UInt8], sha256: String?) -> Job {
        Job(attempt: AttemptID(page: PageID(7), number: 1), source: "book.pdf page 7", kind: .image, index: 0,
            options: PageOptions(), bytes: bytes, sha256: sha256)
    }

    @Test("bytes that do not match the JOB's SHA-256 fail as job-corrupted (retried), naming both hashes; matching ones are read")
    func checked() {
        let processor = PageProcessor(engine: .none)
        processor.decodesWithoutEngine = false
        let bytes = Array("the page as sent".utf8)
        var good = job(bytes, sha256: SHA256.hex(bytes))
        guard case .result = Slot.read(&good, processor: processor) else {
            Issue.record("a page whose bytes match is read")
            return
        }
        var damaged = job(bytes + [0], sha256: SHA256.hex(bytes))
        guard case .fail(let fail) = Slot.read(&damaged, processor: processor) else {
            Issue.record("a damaged page is not read")
            return
        }
        #expect(fail.failure.code == .jobCorrupted && fail.failure.retryable && fail.failure.stage == "receive")
        #expect(fail.failure.message.contains(SHA256.hex(bytes)) && fail.failure.message.contains(SHA256.hex(bytes + [0])))
        #expect(fail.failure.message.hasPrefix("book.pdf page 7: "))
        // A JOB from a coordinator that sends no hash is read as before.
        var unhashed = job(bytes, sha256: nil)
        guard case .result = Slot.read(&unhashed, processor: processor) else {
            Issue.record("a page without a hash is read")
            return
        }
    }
}
